package offsets

import (
	"fmt"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
)

// BenchmarkCommit measures a 10-partition commit over the in-memory log (encoding, append
// and view update; checkpoints included at the default rate).
func BenchmarkCommit(b *testing.B) {
	s := openStore(b, iggylog.NewMem(DefaultPartitions))
	commits := make([]Commit, 10)
	for i := range commits {
		commits[i] = commit("orders", int32(i), 1000, 3, "")
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range s.Commit(b.Context(), "group", commits) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkFetch(b *testing.B) {
	s := openStore(b, iggylog.NewMem(DefaultPartitions))
	var parts []int32
	for i := range 10 {
		mustCommit(b, s, "group", commit("orders", int32(i), 1000, 3, ""))
		parts = append(parts, int32(i))
	}
	req := []TopicPartitions{{Topic: "orders", Partitions: parts}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Fetch("group", req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad measures startup over a log with 200 groups of 50 partitions each, after a
// crash (checkpoint plus tail).
func BenchmarkLoad(b *testing.B) {
	mem := iggylog.NewMem(DefaultPartitions)
	s := openStore(b, mem)
	for g := range 200 {
		var commits []Commit
		for p := range 50 {
			commits = append(commits, commit("t", int32(p), int64(g*p), 1, "meta"))
		}
		mustCommit(b, s, fmt.Sprint("group-", g), commits...)
	}
	b.ReportAllocs()
	for b.Loop() {
		openStore(b, mem)
	}
}
