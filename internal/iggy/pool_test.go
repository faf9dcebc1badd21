package iggy

import (
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// held is a request the scripted server holds until the test answers it.
type held struct {
	conn   int
	answer chan struct{}
}

// With every connection of the pool busy, a call waits for whichever connection frees first,
// not for one chosen in advance.
func TestPoolHandsOutTheFirstConnectionThatFrees(t *testing.T) {
	for _, freed := range []int{0, 1} { // which of the two held requests is answered first
		t.Run([]string{"first held", "second held"}[freed], func(t *testing.T) {
			arrived := make(chan held)
			done := make(chan struct{})
			s := startScripted(t, func(conn int, h wire.RequestHeader, _ []byte) []byte {
				if h.Operation == wire.OpRegister || h.Code != wire.CodeGetStream {
					return nil
				}
				r := held{conn, make(chan struct{})}
				select {
				case arrived <- r:
				case <-done:
					return nil
				}
				select {
				case <-r.answer:
					return reply(h, 0, streamPayload("s"))
				case <-done:
					return nil
				}
			})
			t.Cleanup(func() { close(done) })
			cfg := s.config()
			cfg.PoolSize = 2
			cl, err := Dial(testCtx(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cl.Close() })

			results := make(chan error, 3)
			call := func() { _, err := cl.GetStream(testCtx(t), ID(1)); results <- err }
			go call()
			go call()
			busy := []held{<-arrived, <-arrived} // both connections hold a request
			if busy[0].conn == busy[1].conn {
				t.Fatalf("both requests on connection %d", busy[0].conn)
			}
			go call()
			close(busy[freed].answer)
			if err := <-results; err != nil {
				t.Fatal(err)
			}
			// The waiting call must now run on the freed connection while the other stays busy.
			var third held
			select {
			case third = <-arrived:
			case <-time.After(10 * time.Second):
				t.Fatalf("the waiting call did not take connection %d when it freed", busy[freed].conn)
			}
			if third.conn != busy[freed].conn {
				t.Fatalf("the waiting call ran on connection %d, want the freed %d", third.conn, busy[freed].conn)
			}
			close(third.answer)
			close(busy[1-freed].answer)
			for range 2 {
				if err := <-results; err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
