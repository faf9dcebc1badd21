// Package testutil holds helpers that tests of several packages share. Only tests import it.
package testutil
