package iggy

import (
	"sync/atomic"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// TestOnReconnect: the hook runs for each login after the first (a lost session), not for
// the first one.
func TestOnReconnect(t *testing.T) {
	s := startScripted(t, func(conn int, h wire.RequestHeader, _ []byte) []byte {
		if h.Operation == wire.OpRegister {
			return nil
		}
		if conn == 0 {
			return eviction(wire.EvictStaleClient)
		}
		return reply(h, 0, wire.AppendStreams(nil, nil))
	})
	var calls atomic.Int32
	cfg := s.config()
	cfg.OnReconnect = func() { calls.Add(1) }
	cn, err := DialConn(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	if n := calls.Load(); n != 0 {
		t.Fatalf("OnReconnect called %d times after the first login, want 0", n)
	}
	if _, err := cn.GetStreams(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("OnReconnect called %d times after one re-login, want 1", n)
	}
}
