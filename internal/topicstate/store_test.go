package topicstate

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
)

func newStore(t *testing.T, log iggylog.Log) *Store {
	t.Helper()
	s := New(log, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := s.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStoreConfigsAndLogStart(t *testing.T) {
	ctx := context.Background()
	log := iggylog.NewMem(1)
	a := newStore(t, log)
	if err := a.SetConfigs(ctx, "t", 7, map[string]string{"cleanup.policy": "compact"}); err != nil {
		t.Fatal(err)
	}
	got, err := a.RaiseLogStart(ctx, "t", 7, map[int32]int64{0: 5, 1: 3})
	if err != nil || got[0] != 5 || got[1] != 3 {
		t.Fatalf("raise: %v %v", got, err)
	}
	// Lower offsets change nothing and report the stored ones.
	got, err = a.RaiseLogStart(ctx, "t", 7, map[int32]int64{0: 2})
	if err != nil || got[0] != 5 {
		t.Fatalf("lower raise: %v %v", got, err)
	}
	// A second gateway (a restart, or another instance) reads the same state.
	b := newStore(t, log)
	st := b.Get(ctx, "t", 7)
	if st.Configs["cleanup.policy"] != "compact" || st.LogStart[0] != 5 || st.LogStart[1] != 3 {
		t.Fatalf("other store: %+v", st)
	}
	// A recreated Iggy topic (another id) starts empty, and writing for it drops the old state.
	if st := b.Get(ctx, "t", 8); st.Configs != nil || st.LogStart != nil {
		t.Fatalf("new id sees old state: %+v", st)
	}
	if err := b.SetConfigs(ctx, "t", 8, map[string]string{"segment.bytes": "1"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if st := a.Get(ctx, "t", 8); !maps.Equal(st.Configs, map[string]string{"segment.bytes": "1"}) || st.LogStart != nil {
		t.Fatalf("after recreate: %+v", st)
	}
	if err := a.Forget(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if st := b.Get(ctx, "t", 8); st.Configs != nil {
		t.Fatalf("after forget: %+v", st)
	}
}

// TestStoreGetRefreshes: a plain read catches up with other gateways once the view is older
// than the refresh interval.
func TestStoreGetRefreshes(t *testing.T) {
	ctx := context.Background()
	log := iggylog.NewMem(1)
	a, b := newStore(t, log), newStore(t, log)
	now := time.Unix(100, 0)
	b.now = func() time.Time { return now }
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.SetConfigs(ctx, "t", 1, map[string]string{"x": "y"}); err != nil {
		t.Fatal(err)
	}
	if st := b.Get(ctx, "t", 1); st.Configs != nil {
		t.Fatalf("read within the refresh interval caught up: %+v", st)
	}
	now = now.Add(DefaultRefresh)
	if st := b.Get(ctx, "t", 1); st.Configs["x"] != "y" {
		t.Fatalf("stale read did not catch up: %+v", st)
	}
}

func TestStoreSkipsCorruptRecords(t *testing.T) {
	ctx := context.Background()
	log := iggylog.NewMem(1)
	good := (&Record{Kind: KindConfigs, Topic: "t", TopicID: 1, Configs: map[string]string{"a": "b"}}).Encode()
	bad := append([]byte(nil), good...)
	bad[3] ^= 1
	if _, err := log.Append(ctx, 0, [][]byte{bad, good}); err != nil {
		t.Fatal(err)
	}
	if st := newStore(t, log).Get(ctx, "t", 1); st.Configs["a"] != "b" {
		t.Fatalf("%+v", st)
	}
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Record
		ok   bool
	}{
		{"configs", Record{Kind: KindConfigs, Topic: "t", Configs: map[string]string{"a": "b"}}, true},
		{"log start", Record{Kind: KindLogStart, Topic: "t", LogStart: map[string]int64{"3": 4}}, true},
		{"delete", Record{Kind: KindDelete, Topic: "t"}, true},
		{"no topic", Record{Kind: KindDelete}, false},
		{"unknown kind", Record{Kind: "x", Topic: "t"}, false},
		{"bad partition", Record{Kind: KindLogStart, Topic: "t", LogStart: map[string]int64{"x": 4}}, false},
		{"negative offset", Record{Kind: KindLogStart, Topic: "t", LogStart: map[string]int64{"1": -4}}, false},
		{"snapshot", Record{Kind: KindSnapshot, Upto: 3, Topics: map[string]SnapshotTopic{"t": {TopicID: 1, LogStart: map[string]int64{"0": 2}}}}, true},
		{"empty snapshot", Record{Kind: KindSnapshot}, true},
		{"snapshot of no name", Record{Kind: KindSnapshot, Topics: map[string]SnapshotTopic{"": {}}}, false},
		{"snapshot bad partition", Record{Kind: KindSnapshot, Topics: map[string]SnapshotTopic{"t": {LogStart: map[string]int64{"-1": 2}}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.r.Encode())
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v", err)
			}
		})
	}
	if _, err := Decode([]byte{1, 2}); err == nil {
		t.Fatal("short record decoded")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add((&Record{Kind: KindConfigs, Topic: "t", TopicID: 3, Configs: map[string]string{"a": "b"}}).Encode())
	f.Add((&Record{Kind: KindLogStart, Topic: "t", LogStart: map[string]int64{"0": 9}}).Encode())
	f.Add((&Record{Kind: KindSnapshot, Upto: 4, Topics: map[string]SnapshotTopic{"t": {TopicID: 2, LogStart: map[string]int64{"1": 3}}}}).Encode())
	f.Add([]byte("{}\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode(data)
		if err != nil {
			return
		}
		again, err := Decode(r.Encode())
		if err != nil || again.Kind != r.Kind || again.Topic != r.Topic || !maps.Equal(again.Configs, r.Configs) || !maps.Equal(again.LogStart, r.LogStart) ||
			again.Upto != r.Upto || len(again.Topics) != len(r.Topics) {
			t.Fatalf("round trip: %+v -> %+v, %v", r, again, err)
		}
	})
}

// countingLog counts the entries read from a log.
type countingLog struct {
	iggylog.Log
	read int
}

func (l *countingLog) ReadFrom(ctx context.Context, p int, off uint64, n int) ([]iggylog.Entry, error) {
	es, err := l.Log.ReadFrom(ctx, p, off, n)
	l.read += len(es)
	return es, err
}

// views returns the whole view of a store, for comparisons.
func views(s *Store) map[string]State {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]State{}
	for name, st := range s.topics {
		out[name] = s.cachedLocked(name, st.TopicID)
	}
	return out
}

func sameViews(t *testing.T, got, want map[string]State) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d topics, want %d", len(got), len(want))
	}
	for name, w := range want {
		g := got[name]
		if g.TopicID != w.TopicID || !maps.Equal(g.Configs, w.Configs) || !maps.Equal(g.LogStart, w.LogStart) {
			t.Fatalf("%s: %+v, want %+v", name, g, w)
		}
	}
}

// TestStoreSnapshotBoundsStartup: with a snapshot every 50 records, a log of thousands of
// DeleteRecords-like records is read at startup from its latest snapshot, and gives the
// same view as a full replay.
func TestStoreSnapshotBoundsStartup(t *testing.T) {
	ctx := context.Background()
	log := iggylog.NewMem(1)
	w := New(log, slog.New(slog.NewTextHandler(io.Discard, nil)))
	w.snapshotEvery = 50
	if err := w.Load(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		topic := "t" + strconv.Itoa(i%7)
		if i%100 == 0 {
			if err := w.SetConfigs(ctx, topic, 1, map[string]string{"cleanup.policy": "compact", "n": strconv.Itoa(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.RaiseLogStart(ctx, topic, 1, map[int32]int64{int32(i % 3): int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Forget(ctx, "t6"); err != nil {
		t.Fatal(err)
	}
	end, _ := log.End(ctx, 0)
	counted := &countingLog{Log: log}
	r := newStore(t, counted)
	if counted.read > 2*50+2 {
		t.Fatalf("startup read %d of %d records, want at most %d", counted.read, end, 2*50+2)
	}
	sameViews(t, views(r), views(w))

	// A log whose records carry no snapshot pointer (older gateways) is replayed whole.
	plain := iggylog.NewMem(1)
	es, _ := log.ReadFrom(ctx, 0, 0, int(end))
	for _, e := range es {
		rec, err := Decode(e.Data)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == KindSnapshot {
			continue
		}
		rec.Snapshot = nil
		if _, err := plain.Append(ctx, 0, [][]byte{rec.Encode()}); err != nil {
			t.Fatal(err)
		}
	}
	sameViews(t, views(newStore(t, plain)), views(w))
}

// TestStoreSnapshotInterleaved: a snapshot made by a gateway that had read up to some
// offset, appended after another gateway's records, is completed by replaying those.
func TestStoreSnapshotInterleaved(t *testing.T) {
	ctx := context.Background()
	log := iggylog.NewMem(1)
	appendRec := func(r *Record) {
		if _, err := log.Append(ctx, 0, [][]byte{r.Encode()}); err != nil {
			t.Fatal(err)
		}
	}
	appendRec(&Record{Kind: KindConfigs, Topic: "a", TopicID: 1, Configs: map[string]string{"x": "1"}})
	appendRec(&Record{Kind: KindLogStart, Topic: "a", TopicID: 1, LogStart: map[string]int64{"0": 5}})
	// Another gateway's record lands at offset 2, before the snapshot made as of offset 2.
	appendRec(&Record{Kind: KindConfigs, Topic: "b", TopicID: 2, Configs: map[string]string{"y": "2"}})
	appendRec(&Record{Kind: KindSnapshot, Upto: 2, Topics: map[string]SnapshotTopic{
		"a": {TopicID: 1, Configs: map[string]string{"x": "1"}, LogStart: map[string]int64{"0": 5}}}})
	at := uint64(3)
	appendRec(&Record{Kind: KindLogStart, Topic: "a", TopicID: 1, LogStart: map[string]int64{"1": 7}, Snapshot: &at})
	counted := &countingLog{Log: log}
	s := newStore(t, counted)
	if counted.read != 1+1+3 { // the last record, the snapshot, then offsets 2..4
		t.Errorf("read %d entries, want 5", counted.read)
	}
	sameViews(t, views(s), map[string]State{
		"a": {TopicID: 1, Configs: map[string]string{"x": "1"}, LogStart: map[int32]int64{0: 5, 1: 7}},
		"b": {TopicID: 2, Configs: map[string]string{"y": "2"}},
	})

	// A pointer to something that is not a snapshot: the whole log is replayed.
	bad := uint64(1)
	appendRec(&Record{Kind: KindDelete, Topic: "b", Snapshot: &bad})
	sameViews(t, views(newStore(t, log)), map[string]State{
		"a": {TopicID: 1, Configs: map[string]string{"x": "1"}, LogStart: map[int32]int64{0: 5, 1: 7}},
	})
}

// holdingLog holds the append of one topic's record until release is closed, as a slow Iggy
// would; held is closed when that append arrives.
type holdingLog struct {
	iggylog.Log
	topic   string
	held    chan struct{}
	release chan struct{}
}

func (l *holdingLog) Append(ctx context.Context, p int, records [][]byte) (uint64, error) {
	if r, err := Decode(records[0]); err == nil && r.Topic == l.topic {
		close(l.held)
		<-l.release
	}
	return l.Log.Append(ctx, p, records)
}

// A write of one topic's state waiting on a slow Iggy append does not hold up the writes of
// other topics, nor reads (issue 25: one lock over the log was held across the append); both
// records are applied, and each write learns its own record's fate.
func TestWritesOfOtherTopicsNotStalled(t *testing.T) {
	h := &holdingLog{Log: iggylog.NewMem(1), topic: "slow", held: make(chan struct{}), release: make(chan struct{})}
	s := newStore(t, h)
	ctx := context.Background()
	slow := make(chan error, 1)
	go func() { slow <- s.SetConfigs(ctx, "slow", 1, map[string]string{"cleanup.policy": "compact"}) }()
	<-h.held
	fast := make(chan error, 1)
	go func() {
		_, err := s.RaiseLogStart(ctx, "fast", 2, map[int32]int64{0: 5})
		if err == nil {
			err = s.Sync(ctx)
		}
		fast <- err
	}()
	stalled := false
	select {
	case err := <-fast:
		if err != nil {
			t.Errorf("other topic: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the write of another topic waited for the slow append")
		stalled = true
	}
	close(h.release)
	if err := <-slow; err != nil {
		t.Errorf("slow topic: %v", err)
	}
	if stalled {
		<-fast
	}
	if got := s.Cached("slow", 1).Configs["cleanup.policy"]; got != "compact" {
		t.Errorf("slow topic's configs %q", got)
	}
	if got := s.Cached("fast", 2).LogStart[0]; got != 5 {
		t.Errorf("fast topic's log start %d", got)
	}
}
