package memserver_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

// crashEnv is an in-memory server on purpose (these tests crash it) and a client of it.
type crashEnv struct {
	srv *memserver.Server
	c   *iggy.Client
	ctx context.Context
}

func newCrashEnv(t *testing.T) *crashEnv {
	t.Helper()
	srv, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c, err := iggy.Dial(ctx, iggy.Config{Addr: srv.Addr(), Username: "iggy", Password: "iggy", PoolSize: 1, PingInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.CreateStream(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	return &crashEnv{srv: srv, c: c, ctx: ctx}
}

// send appends one batch of n messages of size bytes each to partition 0 of topic.
func (e *crashEnv) send(t *testing.T, topic string, n, size int) {
	t.Helper()
	msgs := make([]iggy.Message, n)
	for i := range msgs {
		msgs[i].Payload = bytes.Repeat([]byte{'x'}, size)
	}
	if _, err := e.c.SendMessages(e.ctx, iggy.Name("s"), iggy.Name(topic), 0, msgs); err != nil {
		t.Fatal(err)
	}
}

func (e *crashEnv) count(t *testing.T, topic string) uint64 {
	t.Helper()
	tp, err := e.c.GetTopic(e.ctx, iggy.Name("s"), iggy.Name(topic))
	if err != nil {
		t.Fatal(err)
	}
	return tp.Partitions[0].MessagesCount
}

func TestCrashKeepsWhatTheFlushRulesWrote(t *testing.T) {
	on, off := true, false
	type batch struct{ n, size int }
	tests := []struct {
		name                  string
		opts                  iggy.TopicOptions
		batches               []batch
		afterProcess, afterPM uint64 // messages left after a process crash / a machine crash
	}{
		// Defaults: 1024 messages or 1 MiB unsaved trip a write, without fsync.
		{"defaults, below both thresholds", iggy.TopicOptions{}, []batch{{1000, 10}}, 0, 0},
		{"defaults, count threshold", iggy.TopicOptions{}, []batch{{1000, 10}, {24, 10}, {5, 10}}, 1024, 0},
		{"defaults, byte threshold", iggy.TopicOptions{}, []batch{{3, 200_000}, {3, 200_000}, {1, 10}}, 6, 0},
		{"every message written", iggy.TopicOptions{MessagesRequiredToSave: 1}, []batch{{1, 10}, {7, 10}}, 8, 0},
		{"every message fsynced", iggy.TopicOptions{MessagesRequiredToSave: 1, EnforceFsync: &on}, []batch{{1, 10}, {7, 10}}, 8, 8},
		{"fsync every 10", iggy.TopicOptions{MessagesRequiredToSave: 10, EnforceFsync: &on}, []batch{{6, 10}, {6, 10}, {3, 10}}, 12, 12},
		{"explicit no fsync", iggy.TopicOptions{MessagesRequiredToSave: 2, EnforceFsync: &off}, []batch{{2, 10}, {1, 10}}, 2, 0},
		{"small byte threshold", iggy.TopicOptions{SizeOfMessagesRequiredToSave: 1}, []batch{{1, 10}, {2, 10}}, 3, 0},
	}
	for _, kind := range []memserver.CrashKind{memserver.ProcessCrash, memserver.MachineCrash} {
		t.Run(kind.String(), func(t *testing.T) {
			e := newCrashEnv(t)
			var sent uint64
			for _, tt := range tests {
				if _, err := e.c.CreateTopic(e.ctx, iggy.Name("s"), tt.name, 1, tt.opts); err != nil {
					t.Fatal(err)
				}
				for _, b := range tt.batches {
					e.send(t, tt.name, b.n, b.size)
					sent += uint64(b.n)
				}
			}
			var want uint64
			for _, tt := range tests {
				want += tt.afterProcess
				if kind == memserver.MachineCrash {
					want += tt.afterPM - tt.afterProcess
				}
			}
			if lost := e.srv.Crash(kind); lost != sent-want {
				t.Errorf("Crash reported %d lost, want %d", lost, sent-want)
			}
			for _, tt := range tests {
				want := tt.afterProcess
				if kind == memserver.MachineCrash {
					want = tt.afterPM
				}
				if got := e.count(t, tt.name); got != want {
					t.Errorf("%s: %d messages after the crash, want %d", tt.name, got, want)
				}
			}
		})
	}
}

// After a crash the lost offsets are handed out again, consumer offsets are clamped to the
// new last offset, and the topic reports its flush options.
func TestCrashReusesOffsetsAndClampsConsumerOffsets(t *testing.T) {
	e := newCrashEnv(t)
	if _, err := e.c.CreateTopic(e.ctx, iggy.Name("s"), "t", 1, iggy.TopicOptions{MessagesRequiredToSave: 4}); err != nil {
		t.Fatal(err)
	}
	e.send(t, "t", 4, 10) // written
	e.send(t, "t", 3, 10) // in memory only
	consumer := iggy.Consumer{Kind: iggy.ConsumerKindConsumer, ID: iggy.ID(1)}
	p := uint32(0)
	if err := e.c.StoreConsumerOffset(e.ctx, consumer, iggy.Name("s"), iggy.Name("t"), &p, 6); err != nil {
		t.Fatal(err)
	}
	if lost := e.srv.Crash(memserver.ProcessCrash); lost != 3 {
		t.Fatalf("lost %d, want 3", lost)
	}
	off, err := e.c.GetConsumerOffset(e.ctx, consumer, iggy.Name("s"), iggy.Name("t"), &p)
	if err != nil || off == nil || off.StoredOffset != 3 {
		t.Fatalf("consumer offset after the crash: %+v, %v; want 3 (the last surviving offset)", off, err)
	}
	conf, err := e.c.SendMessages(e.ctx, iggy.Name("s"), iggy.Name("t"), 0, []iggy.Message{{Payload: []byte("new")}})
	if err != nil || conf.BaseOffset != 4 {
		t.Fatalf("send after the crash: %+v, %v; want base offset 4 (reused)", conf, err)
	}
	tp, err := e.c.GetTopic(e.ctx, iggy.Name("s"), iggy.Name("t"))
	if err != nil {
		t.Fatal(err)
	}
	f := tp.InForce()
	if tp.Options.MessagesRequiredToSave != 4 || f.EnforceFsync == nil || *f.EnforceFsync || f.SizeOfMessagesRequiredToSave != 1<<20 {
		t.Fatalf("reported options %+v, derived %+v", tp.Options, tp.DerivedOptions)
	}
}
