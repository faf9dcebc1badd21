package offsets

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
)

// checkpointedLog returns a one-partition log of the store's fence (offset 0) and 37 commits
// with a checkpoint after every 10 of them: checkpoints at offsets 11, 22 and 33, the records
// after 33 pointing to it.
func checkpointedLog(t *testing.T) *iggylog.Mem {
	build := iggylog.NewMem(1)
	b := openStore(t, build, func(c *Config) { c.CheckpointEvery = 10 })
	for i := range 37 {
		mustCommit(t, b, fmt.Sprintf("g%d", i%4), commit("t", int32(i%6), int64(i), -1, ""))
	}
	return copyLog(build)
}

// copyLog returns a copy of mem that later writes to mem do not change.
func copyLog(mem *iggylog.Mem) *iggylog.Mem {
	return mem.Clone()
}

// reusedOffsets simulates Iggy losing the tail from keep on and a running gateway appending
// n more records that still point to the checkpoint it knew (at), in its owner epoch.
func reusedOffsets(t *testing.T, mem *iggylog.Mem, keep, at uint64, n int) {
	mem.SetRecords(0, mem.Records(0)[:keep])
	last, err := DecodeRecord(mem.Records(0)[keep-1])
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r := Record{Kind: KindCommit, Checkpoint: at, Epoch: last.Epoch, Group: GroupState{Name: "late", Topics: []TopicOffsets{
			{Topic: "t", Partitions: []PartitionOffset{{Partition: int32(i), Committed: Committed{Offset: int64(i), LeaderEpoch: -1}}}},
		}}}
		if _, err := mem.Append(t.Context(), 0, [][]byte{r.encode(nil)}); err != nil {
			t.Fatal(err)
		}
	}
}

// The gateway starts after each kind of coordinator-log damage, with the state a full
// replay of the surviving records gives, a loud log line and the recovery hook called; in
// recovery mode fail it refuses with a clear error.
func TestLoadRecoversFromDamagedCheckpoint(t *testing.T) {
	tests := []struct {
		name      string
		damage    func(t *testing.T, mem *iggylog.Mem)
		recovered bool   // the damage needs a recovery (else an ordinary load copes)
		failErr   string // in recovery mode fail
	}{
		{"missing tail after a checkpoint", func(t *testing.T, mem *iggylog.Mem) { mem.SetRecords(0, mem.Records(0)[:36]) }, false, ""},
		{"missing tail cutting a checkpoint", func(t *testing.T, mem *iggylog.Mem) { mem.SetRecords(0, mem.Records(0)[:33]) }, false, ""},
		{"unreadable checkpoint", func(t *testing.T, mem *iggylog.Mem) { flip(mem, 33) }, true, "checkpoint at 33"},
		{"checkpoint past the end", func(t *testing.T, mem *iggylog.Mem) { reusedOffsets(t, mem, 26, 33, 3) }, true, "past the end"},
		{"checkpoint pointer to another record", func(t *testing.T, mem *iggylog.Mem) { reusedOffsets(t, mem, 26, 33, 12) }, true, "not checkpoint chunk"},
		{"every checkpoint unreadable", func(t *testing.T, mem *iggylog.Mem) { flip(mem, 11); flip(mem, 22); flip(mem, 33) }, true, "checkpoint at 33"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := checkpointedLog(t)
			tt.damage(t, mem)
			want := replayIntact(t, mem)

			failing, err := New(func() Config { c := testConfig(copyLog(mem)); c.Recovery = RecoverFail; return c }())
			if err != nil {
				t.Fatal(err)
			}
			err = failing.Load(t.Context())
			switch {
			case tt.failErr == "" && err != nil:
				t.Fatalf("recovery mode fail refuses an ordinary load: %v", err)
			case tt.failErr != "" && (err == nil || !strings.Contains(err.Error(), tt.failErr)):
				t.Fatalf("recovery mode fail: Load error %v, want one containing %q", err, tt.failErr)
			case err == nil:
				_ = failing.Close(t.Context())
			}

			var logs bytes.Buffer
			var hooked []int
			s := openStore(t, mem, func(c *Config) {
				c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
				c.OnRecovery = func(p int) { hooked = append(hooked, p) }
			})
			if got := snapshotAll(s)[0]; !reflect.DeepEqual(got, want) {
				t.Fatalf("state after recovery:\n%+v\nwant (full replay of the surviving records):\n%+v", got, want)
			}
			if tt.recovered != (len(hooked) == 1) || tt.recovered != strings.Contains(logs.String(), "level=ERROR msg=\"coordinator log checkpoint damaged") {
				t.Fatalf("recovery hook calls %v, logs:\n%s", hooked, logs.String())
			}
			if tt.recovered && !strings.Contains(logs.String(), "replay_to=") {
				t.Fatalf("the error log names no range:\n%s", logs.String())
			}
			// The recovery wrote a fresh checkpoint: the next start needs none.
			hooked = nil
			again := openStore(t, copyLog(mem), func(c *Config) { c.OnRecovery = func(p int) { hooked = append(hooked, p) } })
			if len(hooked) != 0 || !reflect.DeepEqual(snapshotAll(again)[0], want) {
				t.Fatalf("second start: recovered %v", hooked)
			}
		})
	}
}

// replayIntact replays every decodable non-checkpoint record of partition 0 in order.
func replayIntact(t *testing.T, mem *iggylog.Mem) []GroupState {
	t.Helper()
	v := make(view)
	var ep epochs
	for _, data := range mem.Records(0) {
		if r, err := DecodeRecord(data); err == nil && ep.admit(r) && r.Kind != KindCheckpoint {
			v.apply(r)
		} else if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatal(err)
		}
	}
	return v.snapshot()
}

func TestParseRecovery(t *testing.T) {
	for name, want := range map[string]Recovery{"fallback": RecoverFallback, "fail": RecoverFail, "skip": RecoverSkip} {
		if got, err := ParseRecovery(name); err != nil || got != want {
			t.Errorf("ParseRecovery(%q) = %v, %v", name, got, err)
		}
	}
	if _, err := ParseRecovery("maybe"); err == nil {
		t.Error("ParseRecovery accepts maybe")
	}
}
