package offsets

import (
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
)

var restartCommits = flag.Int("restart.commits", 0, "TestRestartAfterManyCommits: offset commits to make before measuring a restart (0 skips it)")

// TestRestartAfterManyCommits measures a gateway restart (Load, after a crash: no shutdown
// checkpoint) over a coordinator log in Iggy that received -restart.commits offset commits
// from 1,000 groups (each commit 4 partitions of one topic, 64 committing clients at once),
// and checks it stays under 5 s (docs/COORDINATOR-LOG.md §6 records the figures):
//
//	go test ./internal/offsets/ -run TestRestartAfterManyCommits -v -args -restart.commits=1000000
func TestRestartAfterManyCommits(t *testing.T) {
	n := *restartCommits
	if n <= 0 {
		t.Skip("set -restart.commits to run")
	}
	cfg := iggyBackend(t)
	stream := uniqueStream(t)
	open := func() (*Store, *iggylog.Topic) {
		log := iggylog.NewTopic(dial(t, cfg), stream, DefaultTopic, DefaultPartitions)
		return openStore(t, log), log
	}
	s, log := open()
	const groups, workers = 1000, 64
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				g := fmt.Sprintf("group-%d", i%groups)
				var commits []Commit
				for p := range int32(4) {
					commits = append(commits, commit("orders", p, i, 1, ""))
				}
				for _, err := range s.Commit(t.Context(), g, commits) {
					if err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	committing := time.Since(start)
	var stored uint64
	for k := range DefaultPartitions {
		end, err := log.End(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		stored += end
	}
	before := snapshotAll(s)

	// A crash: the store is not closed, a new one loads what Iggy holds.
	start = time.Now()
	again, _ := open()
	took := time.Since(start)
	if fmt.Sprint(snapshotAll(again)) != fmt.Sprint(before) {
		t.Fatal("state after restart differs")
	}
	replayed := 0
	for _, p := range again.parts {
		replayed += p.sinceCheckpoint
	}
	t.Logf("%d commits from %d groups in %v (%.0f/s); %d records stored in the log; restart (load after a crash) %v, %d records replayed after the checkpoints",
		n, groups, committing.Round(time.Millisecond), float64(n)/committing.Seconds(), stored, took.Round(time.Millisecond), replayed)
	if took > 5*time.Second {
		t.Fatalf("restart took %v, want < 5s", took)
	}
}
