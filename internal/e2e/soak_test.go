package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSoak runs the exactly-once soak (docs/IDEMPOTENCE.md §8): clients that keep killing their
// own connections produce and consume records through a chain of topics.
func TestSoak(t *testing.T) {
	runScenarios(t, franzFamily, []Scenario{
		{Name: "soak-connection-kills-chain", Needs: groupDataNeeds, Covers: []Cell{CellIdempotence}, Run: soakConnectionKills},
	})
}

// soakRecords is how many records the soak sends through the chain: IGGYGW_SOAK_RECORDS, or
// 100,000 (about half a minute on the CI machine).
func soakRecords(t *testing.T) int {
	s := os.Getenv("IGGYGW_SOAK_RECORDS")
	if s == "" {
		return 100_000
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("IGGYGW_SOAK_RECORDS=%q: want a positive number of records", s)
	}
	return n
}

// soakSeed is the seed of the connection killers: IGGYGW_SOAK_SEED, or the time. It is logged
// so that a failing run can be repeated.
func soakSeed(t *testing.T) uint64 {
	if s := os.Getenv("IGGYGW_SOAK_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("IGGYGW_SOAK_SEED=%q: want an unsigned number", s)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

// connKiller dials connections that close themselves after a random number of bytes, read and
// written together, between minBytes and maxBytes: mid-request (the gateway gets half a
// frame) or mid-response (the client never learns whether its request was applied, the case
// idempotent producers exist for).
type connKiller struct {
	minBytes, maxBytes int64
	kills              atomic.Int64

	mu  sync.Mutex
	rng *rand.Rand
}

func newConnKiller(seed uint64, minBytes, maxBytes int64) *connKiller {
	return &connKiller{minBytes: minBytes, maxBytes: maxBytes, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// dial is a kgo.Dialer.
func (k *connKiller) dial(ctx context.Context, network, host string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, host)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	budget := k.minBytes + k.rng.Int64N(k.maxBytes-k.minBytes+1)
	k.mu.Unlock()
	return &dyingConn{Conn: c, killer: k, left: budget}, nil
}

// dyingConn is a connection that closes itself once its byte budget is spent.
type dyingConn struct {
	net.Conn
	killer *connKiller

	mu   sync.Mutex
	left int64
	dead bool
}

var errConnKilled = errors.New("connection killed by the soak's dialer")

// spend takes up to n bytes from the budget and reports how many may pass and whether the
// connection dies after them.
func (c *dyingConn) spend(n int) (allowed int, dies bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return 0, true
	}
	if int64(n) < c.left {
		c.left -= int64(n)
		return n, false
	}
	allowed, c.left, c.dead = int(c.left), 0, true
	return allowed, true
}

func (c *dyingConn) kill() {
	c.killer.kills.Add(1)
	c.Conn.Close()
}

func (c *dyingConn) Write(b []byte) (int, error) {
	allowed, dies := c.spend(len(b))
	n, err := c.Conn.Write(b[:allowed])
	if dies {
		c.kill()
		return n, errConnKilled
	}
	return n, err
}

func (c *dyingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n == 0 {
		return n, err
	}
	allowed, dies := c.spend(n)
	if dies {
		c.kill()
		if allowed == 0 {
			return 0, errConnKilled
		}
	}
	return allowed, err
}

// soakConnectionKills: an idempotent producer writes N numbered records to topic A; a consumer
// group member relays A to topic B (it produces what each poll returned, waits for the
// acknowledgements, commits, and only then lets a rebalance happen); a third client reads B.
// Every client's connections die after a random number of bytes (16 KiB to 512 KiB: tens of
// kills per client). Every record must come out of B exactly once, in order per partition, and
// A and B must each hold exactly N records: no retry was written twice, no acknowledged record
// was lost, and the relay's commits kept up with its position.
func soakConnectionKills(t *testing.T, _ *Env) {
	env := startMemIggyEnv(t)
	n := soakRecords(t)
	seed := soakSeed(t)
	t.Logf("soak: %d records, connection-killer seed %d (IGGYGW_SOAK_RECORDS, IGGYGW_SOAK_SEED)", n, seed)
	const partitions = 4
	topicA, topicB := env.CreateTopic(t, partitions), env.CreateTopic(t, partitions)
	group := "g-" + topicA
	ctx := ctxFor(t, 10*time.Minute)

	killers := map[string]*connKiller{}
	client := func(name string, opts ...kgo.Opt) *kgo.Client {
		k := newConnKiller(seed+uint64(len(killers)), 16<<10, 512<<10)
		killers[name] = k
		// Every kill costs the requests in flight one retry: allow many. Requests and
		// responses stay well under the smallest budgets' mean, so that most get through.
		return env.Kgo(t, append([]kgo.Opt{kgo.Dialer(k.dial), kgo.RecordRetries(1000), kgo.RequestRetries(1000),
			kgo.RetryTimeout(2 * time.Minute), kgo.ClientID("soak-" + name),
			kgo.ProducerBatchMaxBytes(16 << 10), kgo.FetchMaxBytes(64 << 10), kgo.FetchMaxPartitionBytes(16 << 10)}, opts...)...)
	}
	producer := client("producer", kgo.DefaultProduceTopic(topicA))
	relay := client("relay", kgo.DefaultProduceTopic(topicB), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topicA),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll())
	reader := client("reader", kgo.ConsumeTopics(topicB), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))

	start := time.Now()
	errs := make(chan error, 3)
	var wg sync.WaitGroup
	wg.Add(2)
	var acked atomic.Int64
	runCtx, stopClients := context.WithCancel(ctx)
	go func() { defer wg.Done(); errs <- soakProduce(runCtx, producer, n, &acked) }()
	var relayed atomic.Int64
	go func() { defer wg.Done(); errs <- soakRelay(runCtx, relay, &relayed) }()

	seen := make([]int, n)
	last := map[int32]int{} // partition → number of the last record read from it
	read, outOfOrder := 0, 0
	progress := func() string {
		return fmt.Sprintf("%d acknowledged, %d relayed, %d read; connections killed: %s", acked.Load(), relayed.Load(), read, killCounts(killers))
	}
	lastProgress, lastRead, lastLog := time.Now(), 0, time.Now()
	for read < n && ctx.Err() == nil {
		if read != lastRead {
			lastProgress, lastRead = time.Now(), read
		}
		if time.Since(lastProgress) > soakStall {
			stopClients()
			wg.Wait()
			t.Fatalf("no record read for %s: %s", soakStall, progress())
		}
		if time.Since(lastLog) > 10*time.Second {
			t.Logf("after %s: %s", time.Since(start).Round(time.Second), progress())
			lastLog = time.Now()
		}
		select {
		case err := <-errs:
			if err != nil {
				stopClients()
				wg.Wait()
				t.Fatal(err)
			}
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := reader.PollFetches(pctx)
		cancel()
		fs.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				t.Errorf("reader: fetch %s/%d: %v", topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			i, err := strconv.Atoi(string(r.Value[len("soak-"):]))
			if err != nil || i < 0 || i >= n {
				t.Errorf("read a record that was never produced: %q at %d/%d", r.Value, r.Partition, r.Offset)
				return
			}
			if seen[i]++; seen[i] == 1 {
				read++
			}
			if prev, ok := last[r.Partition]; ok && i <= prev {
				outOfOrder++
			}
			last[r.Partition] = i
		})
		if t.Failed() {
			break
		}
	}
	elapsed := time.Since(start)
	stopClients()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Error(err)
		}
	}
	if read < n {
		t.Fatalf("read %d of %d records from %s before the deadline (%d relayed)", read, n, topicB, relayed.Load())
	}

	dups := 0
	for _, c := range seen {
		dups += c - 1
	}
	if dups > 0 {
		t.Errorf("%d records read more than once from %s", dups, topicB)
	}
	if outOfOrder > 0 {
		t.Errorf("%d records read out of order in their partition of %s", outOfOrder, topicB)
	}
	for _, topic := range []string{topicA, topicB} {
		ends, err := env.Admin(t).ListEndOffsets(ctx, topic)
		if err != nil || ends.Error() != nil {
			t.Fatalf("end offsets of %s: %v %v", topic, err, ends.Error())
		}
		stored := int64(0)
		for _, o := range ends.Offsets().Sorted() {
			stored += o.At
		}
		if stored != int64(n) {
			t.Errorf("%s holds %d records, want %d: retried batches stored twice (or lost)", topic, stored, n)
		}
	}
	if total := killCounts(killers); strings.HasSuffix(total, " 0 in all") {
		t.Errorf("no connection was killed: the soak tested nothing")
	}
	t.Logf("%d records through %s → relay → %s in %s (%.0f records/s end to end), each once, in order; connections killed: %s",
		n, topicA, topicB, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), killCounts(killers))
}

// soakStall is how long the soak waits for the next record before it fails.
const soakStall = time.Minute

// killCounts describes how many connections each client's killer closed.
func killCounts(killers map[string]*connKiller) string {
	var b strings.Builder
	total := int64(0)
	for _, name := range slices.Sorted(maps.Keys(killers)) {
		k := killers[name].kills.Load()
		total += k
		fmt.Fprintf(&b, "%s %d, ", name, k)
	}
	fmt.Fprintf(&b, "%d in all", total)
	return b.String()
}

// soakProduce produces records soak-NNNNNNN, keyed k<N mod 1000>, as fast as the client
// buffers them, and waits for every acknowledgement: a record that fails is an error.
func soakProduce(ctx context.Context, cl *kgo.Client, n int, acked *atomic.Int64) error {
	var failed atomic.Pointer[error]
	for i := range n {
		r := &kgo.Record{Key: fmt.Appendf(nil, "k%d", i%1000), Value: fmt.Appendf(nil, "soak-%07d", i)}
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			if err != nil {
				err = fmt.Errorf("producer: record %s failed: %w", r.Value, err)
				failed.CompareAndSwap(nil, &err)
				return
			}
			acked.Add(1)
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("producer: flush: %w", err)
	}
	if err := failed.Load(); err != nil {
		return *err
	}
	return nil
}

// soakRelay copies what each poll of topic A returns to topic B (same keys, so the same
// partitions, in order), waits for the acknowledgements, commits the polled offsets (retrying
// until the commit succeeds), and only then allows a rebalance: a rebalance never hands out a
// position behind what was already copied. It returns when ctx ends.
func soakRelay(ctx context.Context, cl *kgo.Client, relayed *atomic.Int64) error {
	// A poll blocks rebalances until AllowRebalance; leaving the group on Close waits for one.
	defer cl.AllowRebalance()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var fetchErr error
		fs.EachError(func(topic string, p int32, err error) {
			fetchErr = fmt.Errorf("relay: fetch %s/%d: %w", topic, p, err)
		})
		if fetchErr != nil {
			return fetchErr
		}
		var out []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) { out = append(out, &kgo.Record{Key: r.Key, Value: r.Value}) })
		if len(out) > 0 {
			if err := cl.ProduceSync(ctx, out...).FirstErr(); err != nil {
				return fmt.Errorf("relay: produce: %w", err)
			}
			relayed.Add(int64(len(out)))
			for {
				err := cl.CommitUncommittedOffsets(ctx)
				if err == nil {
					break
				}
				if ctx.Err() != nil {
					return nil
				}
				// A commit the connection's death cut off is retried; a refused one (a
				// generation lost to a rebalance) would let the next member re-read what was
				// copied, which the test reports as duplicates.
				time.Sleep(50 * time.Millisecond)
			}
		}
		cl.AllowRebalance()
	}
}
