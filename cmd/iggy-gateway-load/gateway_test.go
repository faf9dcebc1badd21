package main

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/cmd/iggy-gateway-load/pprofhook"
)

// The overlay imports the hook by path; it must be the package's real import path.
func TestHookImportPath(t *testing.T) {
	name := runtime.FuncForPC(reflect.ValueOf(pprofhook.Handler).Pointer()).Name()
	if got := strings.TrimSuffix(name, ".Handler"); got != hookImportPath {
		t.Fatalf("pprofhook is %q, hookImportPath says %q", got, hookImportPath)
	}
}
