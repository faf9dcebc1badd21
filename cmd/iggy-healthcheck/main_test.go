package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestProbe(t *testing.T) {
	ready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.Error(w, "not ready: Iggy ping failed", http.StatusServiceUnavailable)
		}
	}))
	defer ready.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	tests := []struct {
		target  string
		wantErr string // empty: healthy
	}{
		{target: ready.URL + "/readyz"},
		{target: ready.URL + "/other", wantErr: "503 Service Unavailable: not ready: Iggy ping failed"},
		{target: "tcp://" + ln.Addr().String()},
		{target: "tcp://" + closedAddr, wantErr: "refused"},
		{target: "http://" + closedAddr + "/readyz", wantErr: "refused"},
		{target: "udp://" + closedAddr, wantErr: "scheme must be"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := probe(ctx, tt.target)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("probe: %v, want healthy", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("probe: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
