package broker

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// stuckPoll holds every poll until its context ends, as a poll waiting for Iggy's reply does.
type stuckPoll struct {
	iggy.API
	entered, returned chan struct{}
}

func (s *stuckPoll) PollMessages(ctx context.Context, _ iggy.PollRequest) (*iggy.Polled, error) {
	defer close(s.returned)
	close(s.entered)
	<-ctx.Done()
	return nil, &iggy.ConnError{Op: "poll_messages", Err: ctx.Err(), Sent: true}
}

// A Fetch whose client closes the connection while its poll waits for Iggy is no failure: it
// logs no warning (docs/DATA-PATH.md).
func TestFetchCancelledByItsClientDoesNotWarn(t *testing.T) {
	logs := &testutil.SyncBuffer{}
	sp := &stuckPoll{entered: make(chan struct{}), returned: make(chan struct{})}
	g := startGateway(t, gatewayOpts{bridge: true,
		logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
		wrap:   func(a iggy.API) iggy.API { sp.API = a; return sp }})
	g.mkTopic("kafka", "c", 1)
	g.produceValues(t, "c", 0, []byte("a"))
	c := dialRaw(t, g.addr)
	c.send(testutil.FetchPartitionsReq(12, "c", 0, 0), 1)
	<-sp.entered
	c.nc.Close()
	<-sp.returned
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "connection closed") { // logged once its handlers are done
		if time.Now().After(deadline) {
			t.Fatalf("the connection was not closed:\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("a fetch cancelled by its client logged a warning:\n%s", logs.String())
	}
}
