package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/gateway"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // startup or runtime failure
	exitUsage   = 2 // invalid configuration
)

// run is the whole process: it returns when ctx is cancelled (after a graceful shutdown) or
// when startup fails.
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	cfg, err := config.Load(args, environ)
	if errors.Is(err, config.ErrHelp) {
		config.WriteUsage(stdout)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "iggy-gateway-kafka: configuration error: %v\n", err)
		return exitUsage
	}
	log := newLogger(cfg, stderr)
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	limitMemory(environ, cfg.Limits.MaxRequestMemory, cfg.TailCacheBytes, cfg.TailCacheSizedFrom, log)
	g, err := gateway.Start(ctx, cfg, log)
	if err != nil {
		if ctx.Err() != nil {
			log.Info("startup interrupted by signal")
			return exitOK
		}
		log.Error("startup failed", "err", err)
		return exitFailure
	}
	defer g.Stop()
	select {
	case <-ctx.Done():
		log.Info("signal received, shutting down", "drain_timeout", cfg.Limits.ShutdownDrainTimeout)
		return exitOK
	case err := <-g.Failed():
		log.Error("listener failed", "err", err)
		return exitFailure
	}
}

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
