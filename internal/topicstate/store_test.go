package topicstate

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
)

func newStore(t *testing.T, log offsets.Log) *Store {
	t.Helper()
	s := New(log, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := s.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStoreConfigsAndLogStart(t *testing.T) {
	ctx := context.Background()
	log := offsets.NewMemLog(1)
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
	log := offsets.NewMemLog(1)
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
	log := offsets.NewMemLog(1)
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
	f.Add([]byte("{}\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode(data)
		if err != nil {
			return
		}
		again, err := Decode(r.Encode())
		if err != nil || again.Kind != r.Kind || again.Topic != r.Topic || !maps.Equal(again.Configs, r.Configs) || !maps.Equal(again.LogStart, r.LogStart) {
			t.Fatalf("round trip: %+v -> %+v, %v", r, again, err)
		}
	})
}
