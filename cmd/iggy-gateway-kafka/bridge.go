package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// fatalLoginCodes are Iggy answers that no retry can fix: wrong credentials, a disabled user,
// missing permissions, or a server speaking another protocol version.
var fatalLoginCodes = []uint32{
	iggy.CodeInvalidFormat, iggy.CodeUnauthenticated, iggy.CodeUnauthorized,
	iggy.CodeInvalidCredentials, iggy.CodeInvalidUsername, iggy.CodeInvalidPassword,
	iggy.CodeUserInactive, iggy.CodeInvalidPersonalAccessToken, iggy.CodePersonalAccessTokenExpired,
	iggy.CodeIncompatibleProtocolVersion,
}

// isTransient reports whether a failed connect may succeed later: Iggy refused the connection,
// timed out or went away, and did not reject the login.
func isTransient(err error) bool {
	if code, ok := iggy.CodeOf(err); ok && slices.Contains(fatalLoginCodes, code) {
		return false
	}
	return errors.Is(err, iggy.ErrConnection) || errors.Is(err, context.DeadlineExceeded)
}

// Backoff between connection attempts.
const (
	firstBackoff = 200 * time.Millisecond
	maxBackoff   = 5 * time.Second
)

// connectBridge dials and logs in to Iggy, retrying transient failures with backoff for up to
// the retry window. A rejected login fails at once. It never falls back to storage-free mode.
func connectBridge(ctx context.Context, b config.Bridge, log *slog.Logger) (*iggy.Client, error) {
	deadline := time.Now().Add(b.RetryWindow)
	cfg := iggy.Config{
		Addr: b.Addr, Username: b.Username, Password: b.Password.Reveal(),
		TLSEnabled: b.TLSEnabled, TLSDomain: b.TLSDomain, TLSCAFile: b.TLSCAFile,
		DialTimeout: min(iggy.DefaultDialTimeout, b.RetryWindow),
	}
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		cl, err := iggy.Dial(ctx, cfg)
		if err == nil {
			log.Info("connected to Iggy", "iggy_addr", b.Addr, "username", b.Username, "attempts", attempt)
			return cl, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !isTransient(err) {
			return nil, fmt.Errorf("Iggy at %s rejected the bridge account %q: %w (check IGGY_KAFKA_IGGY_USERNAME, IGGY_KAFKA_IGGY_PASSWORD and the account's permissions)", b.Addr, b.Username, err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("Iggy at %s not reachable after %s (%d attempts): %w", b.Addr, b.RetryWindow, attempt, err)
		}
		wait := min(backoff, left)
		log.Warn("Iggy not reachable yet, retrying", "iggy_addr", b.Addr, "attempt", attempt, "retry_in", wait, "err", err)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// ensureStream creates the default stream when it does not exist yet.
func ensureStream(ctx context.Context, api iggy.API, name string, log *slog.Logger) error {
	_, err := api.GetStream(ctx, iggy.Name(name))
	if err == nil {
		return nil
	}
	if !iggy.IsCode(err, iggy.CodeStreamIDNotFound, iggy.CodeStreamNameNotFound) {
		return fmt.Errorf("checking the default stream %q: %w", name, err)
	}
	if _, err := api.CreateStream(ctx, name); err != nil && !iggy.IsCode(err, iggy.CodeStreamNameAlreadyExists) {
		if iggy.IsCode(err, iggy.CodeUnauthorized) {
			return fmt.Errorf("the default stream %q does not exist and the bridge account may not create it: grant manage_streams or create the stream: %w", name, err)
		}
		return fmt.Errorf("creating the default stream %q: %w", name, err)
	}
	log.Info("created the default stream", "stream", name)
	return nil
}

// clusterSeed names the Iggy deployment, so that the Kafka cluster id is the same on every
// start: Iggy's cluster name when it reports one, else the Iggy address.
func clusterSeed(ctx context.Context, api iggy.API, addr string) string {
	if md, err := api.GetClusterMetadata(ctx); err == nil && md.Name != "" {
		return "iggy cluster " + md.Name
	}
	return "iggy at " + addr
}
