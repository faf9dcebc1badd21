// Package pprofhook lets iggy-gateway-load take CPU profiles of the gateway process it
// starts, over exactly the load it generates. The load tool links it into the gateway with
// `go build -overlay`, which adds one file importing this package to the gateway's main
// package at build time: the gateway's sources are untouched, and an ordinary build of the
// gateway does not contain it.
//
// When the environment variable named by EnvAddr holds a loopback host:port, the package
// serves there:
//
//	POST /cpu/start        start a CPU profile (409 Conflict if one is running)
//	POST /cpu/stop         stop it; the body is the profile in pprof format
//	GET  /debug/pprof/...  the runtime's other profiles (heap, allocs, goroutine, ...)
package pprofhook

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"runtime/pprof"
	"sync"
)

// EnvAddr names the environment variable holding the address to serve on.
const EnvAddr = "IGGYGW_LOAD_PPROF_ADDR"

func init() {
	addr := os.Getenv(EnvAddr)
	if addr == "" {
		return
	}
	ln, err := listenLoopback(addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pprofhook: %v\n", err)
		return
	}
	go http.Serve(ln, Handler())
}

// listenLoopback refuses addresses other than loopback ones: profiles reveal the process's
// internals and the endpoint has no authentication.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %w", EnvAddr, addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%s=%q: only loopback addresses are served", EnvAddr, addr)
	}
	return net.Listen("tcp", addr)
}

// Handler serves the endpoints listed in the package documentation.
func Handler() http.Handler {
	var cpu cpuProfile
	mux := http.NewServeMux()
	mux.HandleFunc("POST /cpu/start", cpu.start)
	mux.HandleFunc("POST /cpu/stop", cpu.stop)
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	return mux
}

// cpuProfile is the one CPU profile a process can run at a time.
type cpuProfile struct {
	mu  sync.Mutex
	buf *bytes.Buffer // non-nil while running
}

func (c *cpuProfile) start(w http.ResponseWriter, _ *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.buf != nil {
		http.Error(w, "a CPU profile is already running", http.StatusConflict)
		return
	}
	buf := new(bytes.Buffer)
	if err := pprof.StartCPUProfile(buf); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	c.buf = buf
}

func (c *cpuProfile) stop(w http.ResponseWriter, _ *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.buf == nil {
		http.Error(w, "no CPU profile is running", http.StatusConflict)
		return
	}
	pprof.StopCPUProfile()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(c.buf.Bytes())
	c.buf = nil
}
