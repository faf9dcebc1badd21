// Command iggy-memserver runs the in-memory Iggy server (package memserver) as a process, for
// tests and tools that are not written in Go. It speaks Iggy's binary protocol 0.11.0 on TCP.
//
// The server is IN-MEMORY and NOT DURABLE: everything is lost when the process exits.
//
// It prints the bound address on standard output (one line, "host:port") once it is
// listening, then serves until SIGINT or SIGTERM.
//
// SIGUSR1 simulates a crash and restart of the Iggy process, SIGUSR2 a machine crash
// (memserver.Server.Crash): connections are dropped and every partition loses what the real
// server would not have written (or fsynced) under its topic's flush options. A real SIGKILL
// of this process loses everything, which no real server does, so tests that kill Iggy use
// the signals to get an honest picture of what a crash of a real server leaves behind.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "TCP address to listen on (port 0 picks a free port)")
	user := flag.String("root-username", "iggy", "username of the root user")
	pass := flag.String("root-password", "iggy", "password of the root user")
	verbose := flag.Bool("v", false, "log every connection")
	certFile := flag.String("tls-cert", "", "PEM certificate: serve TCP over TLS (with -tls-key)")
	keyFile := flag.String("tls-key", "", "PEM private key of -tls-cert")
	flag.Parse()

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg := memserver.Config{Addr: *addr, RootUsername: *user, RootPassword: *pass, Logger: log}
	if *certFile != "" || *keyFile != "" {
		cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "iggy-memserver: -tls-cert/-tls-key:", err)
			os.Exit(2)
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	srv, err := memserver.Start(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "iggy-memserver:", err)
		os.Exit(1)
	}
	fmt.Println(srv.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	crashes := make(chan os.Signal, 1)
	signal.Notify(crashes, syscall.SIGUSR1, syscall.SIGUSR2)
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case sig := <-crashes:
			kind := memserver.ProcessCrash
			if sig == syscall.SIGUSR2 {
				kind = memserver.MachineCrash
			}
			srv.Crash(kind)
		}
	}
	log.Info("shutting down; in-memory data is discarded")
	if err := srv.Close(); err != nil {
		log.Error("close", "err", err)
	}
}
