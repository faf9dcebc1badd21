// Command iggy-healthcheck is the container health check of the images in this repository,
// which start FROM scratch and so have no shell, curl or wget (see docs/OPERATIONS.md).
//
//	iggy-healthcheck http://127.0.0.1:9094/readyz   # healthy when the answer is 2xx
//	iggy-healthcheck tcp://127.0.0.1:8090           # healthy when the port accepts a connection
//
// It exits 0 when healthy and 1 otherwise, printing why on standard error.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"
)

func main() {
	timeout := flag.Duration("timeout", 3*time.Second, "give up after this long")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: iggy-healthcheck [-timeout 3s] http://host:port/path | tcp://host:port")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := probe(ctx, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "unhealthy:", err)
		os.Exit(1)
	}
}

// probe checks one target: an HTTP(S) URL answering 2xx, or a TCP address accepting connections.
func probe(ctx context.Context, target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	switch u.Scheme {
	case "http", "https":
		return probeHTTP(ctx, target)
	case "tcp":
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", u.Host)
		if err != nil {
			return err
		}
		return conn.Close()
	default:
		return fmt.Errorf("%q: the scheme must be http, https or tcp", target)
	}
}

func probeHTTP(ctx context.Context, target string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s: %s", target, resp.Status, body)
	}
	return nil
}
