// Command iggy-gateway-kafka serves the Kafka wire protocol and stores data in Apache Iggy.
//
// It parses the configuration, sets up logging and runs the gateway that package
// internal/gateway builds from it. SIGTERM or SIGINT stops accepting, drains in-flight
// requests up to the drain timeout, closes the Iggy sessions and exits 0; a second signal
// exits at once.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/iggygw/iggy-gateway-kafka/internal/buildinfo"
)

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "-version") {
		fmt.Println(buildinfo.Read().String("iggy-gateway-kafka"))
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	go func() {
		<-ctx.Done()
		stop() // a second signal gets the default behaviour: exit now
	}()
	os.Exit(run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}
