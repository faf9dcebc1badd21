package offsets

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
)

// panickingLog panics on the first n appends.
type panickingLog struct {
	iggylog.Log
	left atomic.Int32
}

func (l *panickingLog) Append(ctx context.Context, partition int, records [][]byte) (uint64, error) {
	if l.left.Add(-1) >= 0 {
		panic("log bug")
	}
	return l.Log.Append(ctx, partition, records)
}

func panicsOf(component string) int64 {
	for _, p := range supervise.Panics() {
		if p.Component == component {
			return p.Panics
		}
	}
	return 0
}

// A panic in a partition's writer is recovered and counted: the commit of that round fails at
// its deadline, and the writer goes on serving later commits. Before, the panic ended the
// process (issue 25).
func TestWriterPanicRecovered(t *testing.T) {
	log := &panickingLog{Log: iggylog.NewMem(testPartitions)}
	s := openStore(t, log)
	before := panicsOf("offsets_writer")
	log.left.Store(1)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if errs := s.Commit(ctx, "g", []Commit{commit("t", 0, 5, -1, "")}); errs[0] == nil {
		t.Fatal("a commit whose write panicked succeeded")
	}
	if got := panicsOf("offsets_writer") - before; got != 1 {
		t.Errorf("%d writer panics counted, want 1", got)
	}
	mustCommit(t, s, "g", commit("t", 0, 6, -1, ""))
	if got := fetchOne(t, s, "g", "t", 0); got.Offset != 6 {
		t.Errorf("offset %d after the writer recovered, want 6", got.Offset)
	}
}
