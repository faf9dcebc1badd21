package txn

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
)

type marker struct {
	pid    int64
	epoch  int16
	commit bool
	parts  map[TP]uint64
}

type fakeFinisher struct {
	mu       sync.Mutex
	markers  []marker
	commits  map[string][]offsets.Commit
	fail     bool
	restored map[int64]map[TP][]Range
	open     map[int64]map[TP]uint64
}

func (f *fakeFinisher) WriteMarkers(_ context.Context, pid int64, epoch int16, commit bool, parts map[TP]uint64) (map[TP][]Range, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return nil, errors.New("iggy down")
	}
	f.markers = append(f.markers, marker{pid, epoch, commit, parts})
	if commit {
		return nil, nil
	}
	out := map[TP][]Range{}
	for tp, from := range parts {
		out[tp] = []Range{{from, from + 1}}
	}
	return out, nil
}

func (f *fakeFinisher) Begin(_ context.Context, _ int64, tp TP) (uint64, error) {
	return uint64(tp.Partition) * 10, nil
}

func (f *fakeFinisher) CommitOffsets(_ context.Context, group string, cs []offsets.Commit) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.commits == nil {
		f.commits = map[string][]offsets.Commit{}
	}
	f.commits[group] = append(f.commits[group], cs...)
	return nil
}

func (f *fakeFinisher) Restore(pid int64, open map[TP]uint64, aborted map[TP][]Range) {
	if f.restored == nil {
		f.restored, f.open = map[int64]map[TP][]Range{}, map[int64]map[TP]uint64{}
	}
	if aborted != nil {
		f.restored[pid] = aborted
	}
	if open != nil {
		f.open[pid] = open
	}
}

func newTest(t *testing.T, log iggylog.Log, f *fakeFinisher, now func() time.Time) *Coordinator {
	var next atomic.Int64
	next.Store(1000)
	c := New(Config{Log: log, NewProducerID: func() int64 { return next.Add(1) }, Finisher: f, Now: now, ExpiryCheck: time.Hour})
	if err := c.Load(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCommitWritesMarkersAndAppliesOffsets(t *testing.T) {
	ctx := context.Background()
	f := &fakeFinisher{}
	c := newTest(t, iggylog.NewMem(1), f, nil)
	pid, epoch, err := c.InitProducerID(ctx, "tx", 60000, -1, -1)
	if err != nil || epoch != 0 {
		t.Fatalf("init: %d %d %v", pid, epoch, err)
	}
	tp := TP{"out", 1}
	if code := c.Member(pid, epoch, tp); code != kerr.InvalidTxnState.Code {
		t.Fatalf("member before AddPartitions: %d", code)
	}
	if err := c.AddPartitions(ctx, "tx", pid, epoch, []TP{tp}); err != nil {
		t.Fatal(err)
	}
	if code := c.Member(pid, epoch, tp); code != 0 {
		t.Fatalf("member: %d", code)
	}
	if err := c.CommitOffsets(ctx, "tx", "g", pid, epoch, []offsets.Commit{{Topic: "in", Partition: 0, Offset: 5}}); !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("offsets before AddOffsets: %v", err)
	}
	if err := c.AddOffsets(ctx, "tx", pid, epoch, "g"); err != nil {
		t.Fatal(err)
	}
	if err := c.CommitOffsets(ctx, "tx", "g", pid, epoch, []offsets.Commit{{Topic: "in", Partition: 0, Offset: 5}}); err != nil {
		t.Fatal(err)
	}
	if len(f.commits) != 0 {
		t.Fatal("offsets applied before the commit")
	}
	if err := c.EndTxn(ctx, "tx", pid, epoch, true); err != nil {
		t.Fatal(err)
	}
	if len(f.markers) != 1 || !f.markers[0].commit || f.markers[0].parts[tp] != 10 {
		t.Fatalf("markers %+v", f.markers)
	}
	if got := f.commits["g"]; len(got) != 1 || got[0].Offset != 5 {
		t.Fatalf("offsets %+v", f.commits)
	}
	if code := c.Member(pid, epoch, tp); code != kerr.InvalidTxnState.Code {
		t.Fatalf("member after commit: %d", code)
	}
	// A retried EndTxn of the completed commit succeeds without writing again.
	if err := c.EndTxn(ctx, "tx", pid, epoch, true); err != nil || len(f.markers) != 1 {
		t.Fatalf("retry: %v, %d markers", err, len(f.markers))
	}
	if err := c.EndTxn(ctx, "tx", pid, epoch, false); !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("abort after commit: %v", err)
	}
}

func TestNewProducerFencesAndAbortsTheOld(t *testing.T) {
	ctx := context.Background()
	f := &fakeFinisher{}
	c := newTest(t, iggylog.NewMem(1), f, nil)
	pid, e0, _ := c.InitProducerID(ctx, "tx", 60000, -1, -1)
	tp := TP{"out", 0}
	if err := c.AddPartitions(ctx, "tx", pid, e0, []TP{tp}); err != nil {
		t.Fatal(err)
	}
	pid2, e1, err := c.InitProducerID(ctx, "tx", 60000, -1, -1)
	if err != nil || pid2 != pid || e1 <= e0 {
		t.Fatalf("second init: %d/%d %v", pid2, e1, err)
	}
	if len(f.markers) != 1 || f.markers[0].commit || f.markers[0].epoch <= e0 {
		t.Fatalf("the old transaction was not aborted with a bumped epoch: %+v", f.markers)
	}
	if err := c.AddPartitions(ctx, "tx", pid, e0, []TP{tp}); !errors.Is(err, kerr.ProducerFenced) {
		t.Fatalf("old epoch: %v", err)
	}
	if err := c.EndTxn(ctx, "tx", pid, e0, true); !errors.Is(err, kerr.ProducerFenced) {
		t.Fatalf("old epoch EndTxn: %v", err)
	}
	if code := c.Member(pid, e0, tp); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("old epoch produce: %d", code)
	}
	if _, _, err := c.InitProducerID(ctx, "tx", 60000, pid, e0); !errors.Is(err, kerr.ProducerFenced) {
		t.Fatalf("KIP-360 init with a stale epoch: %v", err)
	}
	if _, _, err := c.InitProducerID(ctx, "tx", int32((16 * time.Minute).Milliseconds()), -1, -1); !errors.Is(err, kerr.InvalidTransactionTimeout) {
		t.Fatalf("timeout over the max: %v", err)
	}
}

func TestTimeoutAbortsAndFences(t *testing.T) {
	ctx := context.Background()
	f := &fakeFinisher{}
	var now atomic.Int64
	now.Store(time.Now().UnixMilli())
	c := newTest(t, iggylog.NewMem(1), f, func() time.Time { return time.UnixMilli(now.Load()) })
	pid, e, _ := c.InitProducerID(ctx, "tx", 1000, -1, -1)
	if err := c.AddPartitions(ctx, "tx", pid, e, []TP{{"t", 0}}); err != nil {
		t.Fatal(err)
	}
	c.Expire(ctx)
	if len(f.markers) != 0 {
		t.Fatal("aborted before its timeout")
	}
	now.Add(1500)
	c.Expire(ctx)
	if len(f.markers) != 1 || f.markers[0].commit {
		t.Fatalf("markers %+v", f.markers)
	}
	if err := c.EndTxn(ctx, "tx", pid, e, true); !errors.Is(err, kerr.ProducerFenced) {
		t.Fatalf("commit after the timeout abort: %v", err)
	}
}

// A restart after the commit decision was logged but before the markers were written finishes
// the commit; aborted ranges and open transactions are handed to the data plane.
func TestRestartFinishesAPreparedCommit(t *testing.T) {
	ctx := context.Background()
	log := iggylog.NewMem(1)
	f := &fakeFinisher{}
	c := newTest(t, log, f, nil)
	pid, e, _ := c.InitProducerID(ctx, "a", 60000, -1, -1)
	if err := c.AddPartitions(ctx, "a", pid, e, []TP{{"t", 2}}); err != nil {
		t.Fatal(err)
	}
	if err := c.AddOffsets(ctx, "a", pid, e, "g"); err != nil {
		t.Fatal(err)
	}
	if err := c.CommitOffsets(ctx, "a", "g", pid, e, []offsets.Commit{{Topic: "in", Partition: 3, Offset: 7}}); err != nil {
		t.Fatal(err)
	}
	f.fail = true
	if err := c.EndTxn(ctx, "a", pid, e, true); !errors.Is(err, kerr.ConcurrentTransactions) {
		t.Fatalf("EndTxn with markers failing: %v", err)
	}
	// Another id: aborted, then one left open.
	f.fail = false
	pb, eb, _ := c.InitProducerID(ctx, "b", 60000, -1, -1)
	if err := c.AddPartitions(ctx, "b", pb, eb, []TP{{"t", 1}}); err != nil {
		t.Fatal(err)
	}
	if err := c.EndTxn(ctx, "b", pb, eb, false); err != nil {
		t.Fatal(err)
	}
	pc, ec, _ := c.InitProducerID(ctx, "c", 60000, -1, -1)
	if err := c.AddPartitions(ctx, "c", pc, ec, []TP{{"t", 3}}); err != nil {
		t.Fatal(err)
	}

	f2 := &fakeFinisher{}
	c2 := newTest(t, log, f2, nil)
	c2.Start(ctx)
	defer c2.Close()
	if len(f2.markers) != 1 || !f2.markers[0].commit || f2.markers[0].pid != pid {
		t.Fatalf("markers after restart %+v", f2.markers)
	}
	if got := f2.commits["g"]; len(got) != 1 || got[0].Offset != 7 {
		t.Fatalf("offsets after restart %+v", f2.commits)
	}
	if r := f2.restored[pb][TP{"t", 1}]; len(r) != 1 || r[0] != (Range{10, 11}) {
		t.Fatalf("aborted ranges after restart %+v", f2.restored)
	}
	if o := f2.open[pc]; o[TP{"t", 3}] != 30 {
		t.Fatalf("open transactions after restart %+v", f2.open)
	}
	if _, _, st, _, _ := c2.Describe("a"); st != CompleteCommit {
		t.Fatalf("state %v", st)
	}
	if code := c2.Member(pc, ec, TP{"t", 3}); code != 0 {
		t.Fatalf("open transaction not resumed: %d", code)
	}
}

// A damaged record stops the load with an error rather than being skipped: skipping could
// lose a commit decision.
func TestLoadRefusesACorruptRecord(t *testing.T) {
	ctx := context.Background()
	log := iggylog.NewMem(1)
	c := newTest(t, log, &fakeFinisher{}, nil)
	if _, _, err := c.InitProducerID(ctx, "tx", 60000, -1, -1); err != nil {
		t.Fatal(err)
	}
	recs := log.Records(0)
	bad := append([]byte(nil), recs[0]...)
	bad[len(bad)/2] ^= 0x40
	log.SetRecords(0, [][]byte{bad})
	c2 := New(Config{Log: log, NewProducerID: func() int64 { return 1 }, Finisher: &fakeFinisher{}})
	if err := c2.Load(ctx, nil); err == nil {
		t.Fatal("a corrupt record was loaded")
	}
}
