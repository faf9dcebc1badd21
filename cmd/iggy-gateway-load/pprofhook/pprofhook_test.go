package pprofhook

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestCPUProfileStartStop(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	post := func(path string) (int, []byte) {
		t.Helper()
		resp, err := http.Post(srv.URL+path, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	if code, _ := post("/cpu/stop"); code != http.StatusConflict {
		t.Fatalf("stop before start: %d, want 409", code)
	}
	if code, body := post("/cpu/start"); code != http.StatusOK {
		t.Fatalf("start: %d %s", code, body)
	}
	if code, _ := post("/cpu/start"); code != http.StatusConflict {
		t.Fatalf("second start: %d, want 409", code)
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	code, body := post("/cpu/stop")
	if code != http.StatusOK || !bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		t.Fatalf("stop: %d, %d bytes, want a gzipped pprof profile", code, len(body))
	}
	resp, err := http.Get(srv.URL + "/debug/pprof/allocs?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("allocs profile: %s", resp.Status)
	}
}

func TestListenLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", "example.com:0", "no-port"} {
		if ln, err := listenLoopback(addr); err == nil {
			ln.Close()
			t.Errorf("listenLoopback(%q) accepted", addr)
		}
	}
	ln, err := listenLoopback("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
}
