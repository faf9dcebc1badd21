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
//
// -cluster runs an in-memory Iggy cluster instead (memserver.Cluster): one node per address of
// the comma-separated -cluster-addrs, sharing one state, node 0 the first primary. It prints one
// line with the nodes' addresses, comma-separated. SIGUSR1 then kills the primary (the others
// elect a new one after -election-delay) and SIGUSR2 restarts every killed node as a backup.
// docs/DEPLOYMENT.md ("In-memory Iggy cluster") lists how it differs from a real cluster.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "TCP address to listen on (port 0 picks a free port)")
	user := flag.String("root-username", "iggy", "username of the root user")
	pass := flag.String("root-password", "iggy", "password of the root user")
	verbose := flag.Bool("v", false, "log every connection")
	certFile := flag.String("tls-cert", "", "PEM certificate: serve TCP over TLS (with -tls-key)")
	keyFile := flag.String("tls-key", "", "PEM private key of -tls-cert")
	cluster := flag.Bool("cluster", false, "run an in-memory cluster of the nodes in -cluster-addrs")
	clusterAddrs := flag.String("cluster-addrs", "127.0.0.1:8090,127.0.0.1:8091,127.0.0.1:8092", "comma-separated TCP addresses of the cluster's nodes, with -cluster")
	electionDelay := flag.Duration("election-delay", memserver.DefaultElectionDelay, "how long the cluster has no primary after the primary dies, with -cluster")
	flag.Parse()

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if *cluster {
		if *certFile != "" || *keyFile != "" {
			fmt.Fprintln(os.Stderr, "iggy-memserver: -cluster does not serve TLS")
			os.Exit(2)
		}
		os.Exit(runCluster(log, strings.Split(*clusterAddrs, ","), *user, *pass, *electionDelay))
	}
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

// runCluster serves an in-memory cluster until SIGINT or SIGTERM; SIGUSR1 kills the primary,
// SIGUSR2 restarts the killed nodes. It returns the exit status.
func runCluster(log *slog.Logger, addrs []string, user, pass string, delay time.Duration) int {
	cl, err := memserver.StartCluster(memserver.ClusterConfig{
		Addrs: addrs, ElectionDelay: delay, RootUsername: user, RootPassword: pass, Logger: log,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "iggy-memserver:", err)
		return 1
	}
	fmt.Println(strings.Join(cl.Addrs(), ","))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	faults := make(chan os.Signal, 1)
	signal.Notify(faults, syscall.SIGUSR1, syscall.SIGUSR2)
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case sig := <-faults:
			if sig == syscall.SIGUSR1 {
				cl.KillPrimary()
				continue
			}
			for i := range addrs {
				if err := cl.Restart(i); err != nil {
					log.Error("restart", "node", i, "err", err)
				}
			}
		}
	}
	log.Info("shutting down; in-memory data is discarded")
	if err := cl.Close(); err != nil {
		log.Error("close", "err", err)
		return 1
	}
	return 0
}
