package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// txnTopic creates a fresh topic of n partitions.
func txnTopic(t *testing.T, addr string, n int32) string {
	t.Helper()
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	topic := "txn-" + hex.EncodeToString(suffix[:])
	if _, err := admin(t, addr).CreateTopic(testCtx(t), n, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	return topic
}

// transact produces values to topic in one transaction of the producer and commits or
// aborts it; the records are flushed first, so an aborted transaction's records are stored.
func transact(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, values []string, commit bool) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(v), Value: []byte(v)}, func(r *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce %s: %v", r.Value, err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction (commit %v): %v", commit, err)
	}
}

// consumeAll reads topic from the start with the isolation level until want records came and
// then for quiet more, and returns how often each value was seen.
func consumeAll(t *testing.T, ctx context.Context, addr, topic string, level kgo.IsolationLevel, want int, quiet time.Duration) map[string]int {
	t.Helper()
	cl := kafkaClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(level), kgo.FetchMaxWait(200*time.Millisecond))
	seen, n := map[string]int{}, 0
	deadline := time.Time{}
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		fs.EachError(func(topic string, p int32, err error) {
			if err != context.DeadlineExceeded {
				t.Fatalf("fetch %s/%d: %v", topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)]++
			n++
		})
		if ctx.Err() != nil {
			t.Fatalf("%d of %d records consumed: %v", n, want, ctx.Err())
		}
		if n >= want && deadline.IsZero() {
			deadline = time.Now().Add(quiet)
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return seen
		}
	}
}

// A franz-go transactional producer commits and aborts many small transactions and a larger
// one each way; a read_committed consumer gets every committed record exactly once and no
// aborted one, a read_uncommitted consumer gets both (issue 27, docs/TRANSACTIONS.md).
func TestTransactionsEndToEnd(t *testing.T) {
	addr, user, password := testIggy(t)
	g, _ := start(t, nil, bridgeEnv(addr, password, "IGGY_KAFKA_IGGY_USERNAME="+user)...)
	ctx := testCtx(t)
	topic := txnTopic(t, g.kafkaAddr(), 3)
	producer := kafkaClient(t, g.kafkaAddr(), kgo.TransactionalID("e2e-"+topic), kgo.ProducerLinger(0))

	committed, aborted := map[string]bool{}, map[string]bool{}
	batch := func(name string, n int) []string {
		vs := make([]string, n)
		for i := range vs {
			vs[i] = fmt.Sprintf("%s-%d", name, i)
		}
		return vs
	}
	record := func(vs []string, commit bool) {
		for _, v := range vs {
			if commit {
				committed[v] = true
			} else {
				aborted[v] = true
			}
		}
	}
	for i := range 30 {
		vs := batch(fmt.Sprintf("small%d", i), 1+i%4)
		commit := i%3 != 1
		transact(t, ctx, producer, topic, vs, commit)
		record(vs, commit)
	}
	large := batch("large-commit", 2000)
	transact(t, ctx, producer, topic, large, true)
	record(large, true)
	largeAbort := batch("large-abort", 700)
	transact(t, ctx, producer, topic, largeAbort, false)
	record(largeAbort, false)
	last := batch("last", 5) // committed after the aborted one: the consumer reads past it
	transact(t, ctx, producer, topic, last, true)
	record(last, true)

	seen := consumeAll(t, ctx, g.kafkaAddr(), topic, kgo.ReadCommitted(), len(committed), 2*time.Second)
	for v := range committed {
		if seen[v] != 1 {
			t.Errorf("read_committed: committed %s seen %d times", v, seen[v])
		}
	}
	for v := range aborted {
		if seen[v] != 0 {
			t.Errorf("read_committed: aborted %s seen %d times", v, seen[v])
		}
	}
	if len(seen) != len(committed) {
		t.Errorf("read_committed: %d distinct values, %d committed", len(seen), len(committed))
	}

	all := consumeAll(t, ctx, g.kafkaAddr(), topic, kgo.ReadUncommitted(), len(committed)+len(aborted), time.Second)
	for _, set := range []map[string]bool{committed, aborted} {
		for v := range set {
			if all[v] != 1 {
				t.Errorf("read_uncommitted: %s seen %d times", v, all[v])
			}
		}
	}
}

// Consume, transform and produce exactly once with franz-go's GroupTransactSession: every input
// record's output is committed once, together with the group's offsets (TxnOffsetCommit,
// applied when the transaction commits).
func TestGroupTransactSession(t *testing.T) {
	addr, user, password := testIggy(t)
	g, _ := start(t, nil, bridgeEnv(addr, password, "IGGY_KAFKA_IGGY_USERNAME="+user)...)
	ctx := testCtx(t)
	in, out := txnTopic(t, g.kafkaAddr(), 2), txnTopic(t, g.kafkaAddr(), 2)
	const n = 300
	plain := kafkaClient(t, g.kafkaAddr())
	for i := range n {
		plain.Produce(ctx, &kgo.Record{Topic: in, Value: fmt.Appendf(nil, "%d", i)}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce input %d: %v", i, err)
			}
		})
	}
	if err := plain.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	group := "ctp-" + in
	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(g.kafkaAddr()), kgo.TransactionalID(group), kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(in), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for done := 0; done < n; {
		fs := sess.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%d of %d input records transformed: %v", done, n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		if fs.NumRecords() == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			sess.Produce(ctx, &kgo.Record{Topic: out, Value: append([]byte("t-"), r.Value...)}, func(_ *kgo.Record, err error) {
				if err != nil {
					t.Errorf("produce output: %v", err)
				}
			})
		})
		committed, err := sess.End(ctx, kgo.TryCommit)
		if err != nil {
			t.Fatalf("end: %v", err)
		}
		if committed {
			done += fs.NumRecords()
		}
	}

	seen := consumeAll(t, ctx, g.kafkaAddr(), out, kgo.ReadCommitted(), n, time.Second)
	for i := range n {
		if v := fmt.Sprintf("t-%d", i); seen[v] != 1 {
			t.Errorf("output %s seen %d times", v, seen[v])
		}
	}
	offs, err := admin(t, g.kafkaAddr()).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	offs.Each(func(o kadm.OffsetResponse) { total += o.At })
	if total != n {
		t.Errorf("the group committed offsets adding up to %d, want %d", total, n)
	}
}

// A gateway restarted in the middle of a transaction restores it from the transaction log; a
// new producer of the transactional id then aborts it, and its records written before the
// restart (found in Iggy, docs/TRANSACTIONS.md) stay invisible to read_committed consumers.
func TestTransactionAbortedAfterRestart(t *testing.T) {
	addr, user, password := testIggy(t)
	env := bridgeEnv(addr, password, "IGGY_KAFKA_IGGY_USERNAME="+user)
	first, _ := start(t, nil, env...)
	ctx := testCtx(t)
	topic := txnTopic(t, first.kafkaAddr(), 2)
	id := "restart-" + topic

	before := kafkaClient(t, first.kafkaAddr(), kgo.TransactionalID(id), kgo.ProducerLinger(0))
	transact(t, ctx, before, topic, []string{"c1", "c2", "c3"}, true)
	if err := before.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := before.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "open-%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	before.Close() // the transaction stays open
	first.Stop()

	second, _ := start(t, nil, env...)
	after := kafkaClient(t, second.kafkaAddr(), kgo.TransactionalID(id), kgo.ProducerLinger(0))
	transact(t, ctx, after, topic, []string{"c4", "c5"}, true) // InitProducerId aborts the restored one first

	seen := consumeAll(t, ctx, second.kafkaAddr(), topic, kgo.ReadCommitted(), 5, 2*time.Second)
	for _, v := range []string{"c1", "c2", "c3", "c4", "c5"} {
		if seen[v] != 1 {
			t.Errorf("committed %s seen %d times", v, seen[v])
		}
	}
	if len(seen) != 5 {
		t.Errorf("read_committed saw %d distinct values, want the 5 committed: %v", len(seen), seen)
	}
	all := consumeAll(t, ctx, second.kafkaAddr(), topic, kgo.ReadUncommitted(), 55, time.Second)
	if all["open-0"] != 1 || all["open-49"] != 1 {
		t.Errorf("read_uncommitted misses the aborted records: %v", all)
	}
}
