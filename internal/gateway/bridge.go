package gateway

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
// onReconnect is the client's reconnect hook (iggy.Config.OnReconnect); obs sees every
// command's outcome (iggy.Config.Observer).
func connectBridge(ctx context.Context, b config.Bridge, log *slog.Logger, onReconnect func(), obs iggy.Observer) (*iggy.Client, error) {
	deadline := time.Now().Add(b.RetryWindow)
	cfg := bridgeConfig(b)
	cfg.OnReconnect = onReconnect
	cfg.Observer = obs
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		cl, err := iggy.Dial(ctx, cfg)
		if err == nil {
			log.Info("connected to Iggy", "iggy_addr", b.Addr, "iggy_primary", cl.Primary(), "iggy_nodes", cl.ClusterSize(),
				"username", b.Username, "attempts", attempt)
			return cl, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !isTransient(err) {
			return nil, fmt.Errorf("the bridge account %q was rejected by Iggy at %s: %w (check IGGY_KAFKA_IGGY_USERNAME, IGGY_KAFKA_IGGY_PASSWORD and the account's permissions)", b.Username, b.Addr, err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("bridge to Iggy at %s: not reachable after %s (%d attempts): %w", b.Addr, b.RetryWindow, attempt, err)
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

// bridgeConfig is the Iggy client configuration of the bridge account.
func bridgeConfig(b config.Bridge) iggy.Config {
	return iggy.Config{
		Addr: b.Addr, Username: b.Username, Password: b.Password.Reveal(),
		TLSEnabled: b.TLSEnabled, TLSDomain: b.TLSDomain, TLSCAFile: b.TLSCAFile,
		DialTimeout: min(iggy.DefaultDialTimeout, b.RetryWindow), PoolSize: b.PoolSize,
	}
}

// ensureDefaultStream creates the default stream when it does not exist yet.
func ensureDefaultStream(ctx context.Context, api iggy.StreamEnsurer, name string, log *slog.Logger) error {
	created, err := iggy.EnsureStream(ctx, api, name)
	switch {
	case iggy.IsCode(err, iggy.CodeUnauthorized):
		return fmt.Errorf("the default stream %q does not exist and the bridge account may not create it: grant manage_streams or create the stream: %w", name, err)
	case err != nil:
		return fmt.Errorf("the default stream %q: %w", name, err)
	case created:
		log.Info("created the default stream", "stream", name)
	}
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
