package dataplane

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/epochlog"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

var epochKey = partKey{Target: topicmap.Target{Stream: "s", Topic: "t"}, Partition: 2}

func epochRecord(epoch int32, start, from uint64) epochlog.Record {
	return epochlog.Record{Stream: "s", Topic: "t", Partition: 2, Epoch: epoch, Start: start, TruncatedFrom: from}
}

// TestLeaderEpochHistory: the epoch of each offset, where a read must stop, and the
// OffsetForLeaderEpoch answers, for histories built as the leader-epoch log would.
func TestLeaderEpochHistory(t *testing.T) {
	type lookup struct {
		offset  uint64
		epoch   int32
		next    uint64
		hasNext bool
	}
	type end struct {
		requested int32
		epoch     int32
		end       int64
	}
	for _, tc := range []struct {
		name    string
		records []epochlog.Record
		current int32
		at      []lookup
		ends    []end // with high watermark 900
	}{
		{name: "never truncated", current: 0,
			at:   []lookup{{0, 0, 0, false}, {899, 0, 0, false}},
			ends: []end{{0, 0, 900}, {1, -1, -1}, {-1, -1, -1}}},
		{name: "one truncation", records: []epochlog.Record{epochRecord(1, 500, 700)}, current: 1,
			at:   []lookup{{0, 0, 500, true}, {499, 0, 500, true}, {500, 1, 0, false}, {800, 1, 0, false}},
			ends: []end{{0, 0, 500}, {1, 1, 900}, {2, -1, -1}}},
		{name: "two truncations", records: []epochlog.Record{epochRecord(1, 500, 700), epochRecord(2, 800, 850)}, current: 2,
			at:   []lookup{{10, 0, 500, true}, {600, 1, 800, true}, {800, 2, 0, false}},
			ends: []end{{0, 0, 500}, {1, 1, 800}, {2, 2, 900}}},
		{name: "a later truncation below an earlier epoch's start removes it", current: 2,
			records: []epochlog.Record{epochRecord(1, 500, 700), epochRecord(2, 300, 650)},
			at:      []lookup{{299, 0, 300, true}, {300, 2, 0, false}, {600, 2, 0, false}},
			ends:    []end{{0, 0, 300}, {1, 0, 300}, {2, 2, 900}}},
		{name: "truncated to empty", records: []epochlog.Record{epochRecord(1, 0, 40)}, current: 1,
			at:   []lookup{{0, 1, 0, false}},
			ends: []end{{0, 0, 0}, {1, 1, 900}}},
		{name: "a duplicate epoch (two gateways raced) keeps the first", current: 1,
			records: []epochlog.Record{epochRecord(1, 500, 700), epochRecord(1, 510, 700)},
			at:      []lookup{{505, 1, 0, false}},
			ends:    []end{{0, 0, 500}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l leaderEpochs
			for _, r := range tc.records {
				l.apply(r)
			}
			if got := l.current(epochKey); got != tc.current {
				t.Errorf("current %d, want %d", got, tc.current)
			}
			for _, a := range tc.at {
				e, next, has := l.at(epochKey, a.offset)
				if e != a.epoch || has != a.hasNext || (has && next != a.next) {
					t.Errorf("at(%d) = %d, %d, %v; want %d, %d, %v", a.offset, e, next, has, a.epoch, a.next, a.hasNext)
				}
			}
			for _, w := range tc.ends {
				e, off := l.endOffset(epochKey, w.requested, 900)
				if e != w.epoch || off != w.end {
					t.Errorf("endOffset(%d) = %d, %d; want %d, %d", w.requested, e, off, w.epoch, w.end)
				}
			}
		})
	}
}

// TestLeaderEpochBump: a bump is recorded in the log and read by another gateway, which
// does not record the same truncation again; a later truncation is a new epoch.
func TestLeaderEpochBump(t *testing.T) {
	ctx := context.Background()
	mem := iggylog.NewMem(epochlog.Partitions)
	a := leaderEpochs{log: epochlog.New(mem, testLogger(t))}
	b := leaderEpochs{log: epochlog.New(mem, testLogger(t))}
	now := time.Now()
	if e, recorded, err := a.bump(ctx, epochKey, 700, 500, now); e != 1 || !recorded || err != nil {
		t.Fatalf("first bump: %d %v %v", e, recorded, err)
	}
	// b saw the end at 700 too, and notices only after new records arrived (520).
	if e, recorded, err := b.bump(ctx, epochKey, 700, 520, now); e != 1 || recorded || err != nil {
		t.Fatalf("the same truncation seen by another gateway: %d recorded=%v %v", e, recorded, err)
	}
	// A second truncation, from 900 back to 800.
	if e, recorded, err := b.bump(ctx, epochKey, 900, 800, now); e != 2 || !recorded || err != nil {
		t.Fatalf("second truncation: %d %v %v", e, recorded, err)
	}
	// A restarted gateway reads both.
	fresh := leaderEpochs{log: epochlog.New(mem, testLogger(t))}
	if err := fresh.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if e, end := fresh.endOffset(epochKey, 0, 1000); e != 0 || end != 500 || fresh.current(epochKey) != 2 {
		t.Fatalf("after a restart: epoch 0 ends at %d (epoch %d), current %d; want 500, 2", end, e, fresh.current(epochKey))
	}
	// a learns of epoch 2 when a client names it.
	if code := a.validate(ctx, epochKey, 2); code != 0 {
		t.Fatalf("validate(2) on the gateway that missed the bump: %d, want 0 after a refresh", code)
	}
	for _, tc := range []struct {
		requested int32
		want      int16
	}{{-1, 0}, {1, kerr.FencedLeaderEpoch.Code}, {3, kerr.UnknownLeaderEpoch.Code}} {
		if code := fresh.validate(ctx, epochKey, tc.requested); code != tc.want {
			t.Errorf("validate(%d) = %d, want %d", tc.requested, code, tc.want)
		}
	}
}

// holdingAppends holds the appends of one partition's epoch records until release is closed,
// as a slow Iggy would; held is closed when such an append arrives.
type holdingAppends struct {
	EpochLog
	partition uint32
	held      chan struct{}
	release   chan struct{}
}

func (h *holdingAppends) Append(ctx context.Context, r epochlog.Record) error {
	if r.Partition == h.partition {
		close(h.held)
		<-h.release
	}
	return h.EpochLog.Append(ctx, r)
}

// A truncation of one partition whose epoch record waits on a slow Iggy does not hold up the
// epoch bump of another partition (issue 25: one lock for every bump was held across the log's
// read and append).
func TestEpochBumpsOfOtherPartitionsNotStalled(t *testing.T) {
	ctx := ctxT(t)
	h := &holdingAppends{EpochLog: epochlog.New(iggylog.NewMem(epochlog.Partitions), testLogger(t)),
		partition: 1, held: make(chan struct{}), release: make(chan struct{})}
	l := leaderEpochs{log: h}
	slowKey, fastKey := epochKey, epochKey
	slowKey.Partition, fastKey.Partition = 1, 3
	slow := make(chan error, 1)
	go func() { _, _, err := l.bump(ctx, slowKey, 700, 500, time.Now()); slow <- err }()
	<-h.held
	fast := make(chan error, 1)
	go func() { _, _, err := l.bump(ctx, fastKey, 700, 500, time.Now()); fast <- err }()
	stalled := false
	select {
	case err := <-fast:
		if err != nil || l.current(fastKey) != 1 {
			t.Errorf("other partition: %v, epoch %d", err, l.current(fastKey))
		}
	case <-time.After(5 * time.Second):
		t.Error("the bump of another partition waited for the slow one")
		stalled = true
	}
	close(h.release)
	if err := <-slow; err != nil || l.current(slowKey) != 1 {
		t.Errorf("slow partition: %v, epoch %d", err, l.current(slowKey))
	}
	if stalled {
		<-fast
	}
}
