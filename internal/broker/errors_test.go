package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// The admin APIs name a rejected bridge login as temporary, not as a missing permission.
func TestAdminErrorLoginRejected(t *testing.T) {
	aerr := adminError("t", &iggy.Error{Code: iggy.CodeUnauthorized, Op: "login"})
	if aerr.code != kerr.RequestTimedOut.Code {
		t.Fatalf("adminError for a rejected login: %d %s", aerr.code, aerr.msg)
	}
}
