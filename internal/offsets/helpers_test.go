package offsets

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
)

const testPartitions = 4

func testConfig(log iggylog.Log) Config {
	cfg := DefaultConfig(log)
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Now = func() time.Time { return time.UnixMilli(1_700_000_000_000) }
	return cfg
}

// openStore returns a loaded store over log, closed when the test ends.
func openStore(t testing.TB, log iggylog.Log, mutate ...func(*Config)) *Store {
	t.Helper()
	cfg := testConfig(log)
	for _, m := range mutate {
		m(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// recordingLog wraps a Log, can fail appends, and records the lowest offset each partition
// was read from.
type recordingLog struct {
	iggylog.Log
	mu         sync.Mutex
	failAppend error
	minRead    map[int]uint64
	reads      int
}

func newRecordingLog(inner iggylog.Log) *recordingLog {
	return &recordingLog{Log: inner, minRead: make(map[int]uint64)}
}

var errInjected = errors.New("injected append failure")

func (l *recordingLog) Append(ctx context.Context, partition int, records [][]byte) (uint64, error) {
	l.mu.Lock()
	err := l.failAppend
	l.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return l.Log.Append(ctx, partition, records)
}

func (l *recordingLog) ReadFrom(ctx context.Context, partition int, offset uint64, max int) ([]iggylog.Entry, error) {
	l.mu.Lock()
	if cur, ok := l.minRead[partition]; !ok || offset < cur {
		l.minRead[partition] = offset
	}
	l.reads++
	l.mu.Unlock()
	return l.Log.ReadFrom(ctx, partition, offset, max)
}

func (l *recordingLog) setFail(err error) {
	l.mu.Lock()
	l.failAppend = err
	l.mu.Unlock()
}

// snapshotAll returns the store's whole view, partition by partition.
func snapshotAll(s *Store) [][]GroupState {
	out := make([][]GroupState, len(s.parts))
	for i, p := range s.parts {
		p.mu.RLock()
		out[i] = p.groups.snapshot()
		p.mu.RUnlock()
	}
	return out
}

// replayAll rebuilds the view of every partition from offset 0, ignoring checkpoints.
func replayAll(t testing.TB, log *iggylog.Mem) [][]GroupState {
	t.Helper()
	out := make([][]GroupState, log.Partitions())
	for i := range out {
		recs := log.Records(i)
		v := make(view)
		var ep epochs
		for off, data := range recs {
			r, err := DecodeRecord(data)
			if err != nil {
				t.Fatalf("partition %d offset %d: %v", i, off, err)
			}
			if ep.admit(r) && r.Kind != KindCheckpoint {
				v.apply(r)
			}
		}
		out[i] = v.snapshot()
	}
	return out
}

func commit(topic string, partition int32, offset int64, epoch int32, metadata string) Commit {
	return Commit{Topic: topic, Partition: partition, Offset: offset, LeaderEpoch: epoch, Metadata: metadata}
}

func mustCommit(t testing.TB, s *Store, group string, commits ...Commit) {
	t.Helper()
	for i, err := range s.Commit(t.Context(), group, commits) {
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
}

func fetchOne(t testing.TB, s *Store, group, topic string, partition int32) Committed {
	t.Helper()
	got, err := s.Fetch(group, []TopicPartitions{{Topic: topic, Partitions: []int32{partition}}})
	if err != nil {
		t.Fatal(err)
	}
	return got[0].Partitions[0].Committed
}
