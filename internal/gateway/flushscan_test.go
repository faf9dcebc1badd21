package gateway

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/durability"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// The startup scan names the topics created with Iggy's buffering defaults, and only those.
func TestWarnBufferedTopics(t *testing.T) {
	srv := startIggy(t, "127.0.0.1:0", "iggy")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	root := dialRoot(t, ctx, srv.Addr())
	if _, err := root.CreateStream(ctx, "kafka"); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]durability.Mode{"old-a": durability.IggyDefault, "old-b": durability.IggyDefault, "new": durability.Write, "synced": durability.Fsync} {
		var opts iggy.TopicOptions
		mode.Apply(&opts)
		if _, err := root.CreateTopic(ctx, iggy.Name("kafka"), name, 1, opts); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	warnBufferedTopics(ctx, root, "kafka", slog.New(slog.NewTextHandler(&out, nil)))
	line := out.String()
	if !strings.Contains(line, "level=WARN") || !strings.Contains(line, `count=2 topics="[old-a old-b]"`) {
		t.Fatalf("scan logged %q", line)
	}
	out.Reset()
	warnBufferedTopics(ctx, root, "no-such-stream", slog.New(slog.NewTextHandler(&out, nil)))
	if out.Len() != 0 {
		t.Fatalf("scan of an empty stream logged %q", out.String())
	}
}
