package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1 // a leg failed or a record did not verify
	exitUsage  = 2
)

// run is the whole command.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	res, err := compare(ctx, o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "iggy-gateway-load: %v\n", err)
		return exitFailed
	}
	printReport(stdout, res)
	if !res.ok() {
		return exitFailed
	}
	return exitOK
}
