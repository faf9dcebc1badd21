// Command iggy-gateway-load measures the gateway against direct Iggy access.
//
// In one invocation it produces N records of S bytes through the gateway with franz-go, writes
// the same records directly to the same Iggy server with the project's Iggy client in batches
// of the sizes franz-go cut, consumes both back (through the gateway, and by Iggy polls),
// verifies every record (count, partition, per-producer order, checksum), and prints
// throughput, latency percentiles, the gateway process's CPU seconds per GB and peak RSS, and
// the gateway/direct ratios. See docs/PERFORMANCE.md.
//
// By default it starts an in-memory Iggy server in-process and builds and starts the gateway
// as a child process on free loopback ports; --iggy-addr and --gateway-addr use running ones.
//
// Exit status: 0 when every leg ran and every record verified, 1 otherwise, 2 for bad flags.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
