package memserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestOfficialPythonSDK runs the official Iggy Python SDK (sdktest/sdk_fidelity.py) against
// the server: where the two disagree, the SDK is right. The SDK is looked for in $IGGY_PYTHON,
// then in the project's test venv <repo>/.cache/venv (sdktest/setup.sh installs it there),
// then in python3 on PATH.
// Without it the test skips, unless IGGYGW_E2E_REQUIRED=1 (as in CI), where it fails.
func TestOfficialPythonSDK(t *testing.T) {
	python := findSDKPython(t)
	srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, filepath.Join("sdktest", "sdk_fidelity.py"), srv.Addr())
	out, err := cmd.CombinedOutput()
	t.Logf("official SDK (%s) against the in-memory server:\n%s", python, out)
	if err != nil {
		t.Fatalf("sdk_fidelity.py failed: %v", err)
	}
}

func findSDKPython(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("IGGY_PYTHON"), filepath.Join("..", "..", "..", ".cache", "venv", "bin", "python3"), "python3"}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		path, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import apache_iggy").Run() == nil {
			return path
		}
	}
	msg := "no python3 with the apache-iggy package (run internal/iggy/memserver/sdktest/setup.sh)"
	if os.Getenv("IGGYGW_E2E_REQUIRED") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// startServer starts a server on a free port, closed when the test ends.
func startServer(t *testing.T) *Server {
	t.Helper()
	srv, err := Start(Config{Addr: "127.0.0.1:0", RootUsername: "iggy", RootPassword: "iggy"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}
