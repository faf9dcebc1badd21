package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// profiler drives the pprofhook endpoint of a gateway built with it.
type profiler struct {
	base string // http://host:port
	dir  string // where profiles are written
	http *http.Client
}

func newProfiler(addr, dir string) *profiler {
	return &profiler{base: "http://" + addr, dir: dir, http: &http.Client{Timeout: 30 * time.Second}}
}

// start starts a CPU profile of the gateway.
func (p *profiler) start(ctx context.Context) error {
	_, err := p.post(ctx, "/cpu/start")
	return err
}

// stop stops the profile and writes it to gateway-<name>.cpu.pprof; it returns the path.
func (p *profiler) stop(ctx context.Context, name string) (string, error) {
	body, err := p.post(ctx, "/cpu/stop")
	if err != nil {
		return "", err
	}
	path := filepath.Join(p.dir, "gateway-"+name+".cpu.pprof")
	return path, os.WriteFile(path, body, 0o644)
}

func (p *profiler) post(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("gateway profiling hook: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("gateway profiling hook %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("gateway profiling hook %s: %s: %s", path, resp.Status, body)
	}
	return body, nil
}
