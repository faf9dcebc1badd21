package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/cmd/iggy-gateway-load/pprofhook"
	"github.com/iggygw/iggy-gateway-kafka/internal/childproc"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

// bench is the environment of one comparison: the Iggy server, the gateway, the direct Iggy
// client and the two test topics (one per path, same partitions, same records).
type bench struct {
	o        *Options
	l        layout
	progress io.Writer

	mem      *memserver.Server // nil with --iggy-addr
	iggyAddr string
	iggy     *iggy.Client

	gw       *childproc.Gateway // nil with --gateway-addr or without the gateway legs
	gwAddr   string
	gwPID    int // 0: gateway CPU and RSS are not measured
	prof     *profiler
	buildDir string

	gwTopic, directTopic string
	kafka                *kafkaBroker // nil without --kafka-addr
	noIdemTopic          string       // "" unless --idempotence-off-leg
	// batches is the record count of each batch franz-go wrote in the gateway produce leg, per
	// lane (producer*partitions + partition), as franz-go reported them (batches of concurrent
	// requests may be reported out of order): the direct leg sends batches of the same sizes.
	batches [][]int
	// paceRate is the records/s of this round's rate-limited legs (pacedRate).
	paceRate float64
}

// newBench starts or connects to Iggy and the gateway; on failure it stops what it started.
func newBench(ctx context.Context, o *Options, progress io.Writer) (*bench, error) {
	b := &bench{o: o, l: layout{records: o.Records, producers: o.Producers, partitions: o.Partitions}, progress: progress}
	if err := b.start(ctx); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *bench) start(ctx context.Context) error {
	o := b.o
	b.iggyAddr = o.IggyAddr
	if b.iggyAddr == "" {
		var err error
		b.mem, err = memserver.Start(memserver.Config{Addr: "127.0.0.1:0", RootUsername: o.IggyUsername, RootPassword: o.IggyPassword})
		if err != nil {
			return fmt.Errorf("in-memory Iggy server: %w", err)
		}
		b.iggyAddr = b.mem.Addr()
	}
	var err error
	b.iggy, err = iggy.Dial(ctx, iggy.Config{Addr: b.iggyAddr, Username: o.IggyUsername, Password: o.IggyPassword, SDKName: "iggy-gateway-load"})
	if err != nil {
		return fmt.Errorf("connecting to Iggy at %s: %w", b.iggyAddr, err)
	}
	if o.Gateway {
		if err := b.startGateway(ctx); err != nil {
			return err
		}
	}
	if o.KafkaAddr != "" {
		if b.kafka, err = dialKafka(ctx, o.KafkaAddr); err != nil {
			return err
		}
	}
	return b.ensureStream(ctx)
}

func (b *bench) startGateway(ctx context.Context) error {
	o := b.o
	if o.GatewayAddr != "" {
		b.gwAddr, b.gwPID = o.GatewayAddr, o.GatewayPID
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return waitKafka(wctx, b.gwAddr, nil)
	}
	hook := o.ProfileDir != ""
	bin := o.GatewayBin
	if bin == "" {
		var err error
		if b.buildDir, err = os.MkdirTemp("", "iggy-gateway-load-"); err != nil {
			return err
		}
		start := time.Now()
		if bin, err = buildGateway(ctx, b.buildDir, hook); err != nil {
			return err
		}
		fmt.Fprintf(b.progress, "built the gateway in %s\n", time.Since(start).Round(time.Millisecond))
	}
	g, err := startGateway(ctx, bin, childproc.Iggy{Addr: b.iggyAddr, Username: o.IggyUsername, Password: o.IggyPassword, Stream: o.IggyStream}, hook, o.GatewayEnv)
	if err != nil {
		return err
	}
	b.gw, b.gwAddr, b.gwPID = g, g.Addr, g.PID()
	if hook {
		if err := os.MkdirAll(o.ProfileDir, 0o755); err != nil {
			return err
		}
		b.prof = newProfiler(g.Addrs[pprofhook.EnvAddr], o.ProfileDir)
	}
	return nil
}

// ensureStream creates the gateway's stream when a direct-only run has no gateway to do it.
func (b *bench) ensureStream(ctx context.Context) error {
	if _, err := iggy.EnsureStream(ctx, b.iggy, b.o.IggyStream); err != nil {
		return fmt.Errorf("stream %q: %w", b.o.IggyStream, err)
	}
	return nil
}

// createTopics creates a fresh topic per path for a round, with the flush options of
// --topic-flush on both so that the legs compare like with like.
func (b *bench) createTopics(ctx context.Context) error {
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	b.gwTopic, b.directTopic = "load-"+run+"-gateway", "load-"+run+"-direct"
	if b.o.IdempotenceOffLeg {
		b.noIdemTopic = "load-" + run + "-gateway-idempotence-off"
	}
	for _, name := range b.topics() {
		var opts iggy.TopicOptions
		b.o.TopicFlush.Apply(&opts)
		if _, err := b.iggy.CreateTopic(ctx, iggy.Name(b.o.IggyStream), name, uint32(b.o.Partitions), opts); err != nil {
			return fmt.Errorf("create topic %q: %w", name, err)
		}
	}
	if b.kafka != nil {
		return b.kafka.createTopic(ctx, "load-"+run+"-kafka", b.o.Partitions)
	}
	return nil
}

// deleteTopics deletes the round's topics, unless they are to be kept, so that an in-memory
// server does not hold every round's data.
func (b *bench) deleteTopics() error {
	if b.o.KeepTopics || b.gwTopic == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	for _, name := range b.topics() {
		if err := b.iggy.DeleteTopic(ctx, iggy.Name(b.o.IggyStream), iggy.Name(name)); err != nil {
			errs = append(errs, fmt.Errorf("delete topic %q: %w", name, err))
		}
	}
	b.gwTopic, b.directTopic = "", ""
	if b.kafka != nil {
		errs = append(errs, b.kafka.deleteTopic(ctx))
	}
	b.gwTopic, b.directTopic, b.noIdemTopic = "", "", ""
	return errors.Join(errs...)
}

// topics are the round's test topics.
func (b *bench) topics() []string {
	if b.noIdemTopic == "" {
		return []string{b.gwTopic, b.directTopic}
	}
	return []string{b.gwTopic, b.directTopic, b.noIdemTopic}
}

// highWatermarks returns one past the last offset of each partition of topic, from Iggy.
func (b *bench) highWatermarks(ctx context.Context, topic string) ([]int64, error) {
	t, err := b.iggy.GetTopic(ctx, iggy.Name(b.o.IggyStream), iggy.Name(topic))
	if err != nil {
		return nil, fmt.Errorf("topic %q: %w", topic, err)
	}
	ends := make([]int64, b.o.Partitions)
	for _, p := range t.Partitions {
		if int(p.ID) >= len(ends) {
			return nil, fmt.Errorf("topic %q has partition %d, want %d partitions", topic, p.ID, b.o.Partitions)
		}
		ends[p.ID] = int64(p.HighWatermark())
	}
	return ends, nil
}

// close deletes the last round's topics (unless kept) and stops what newBench started.
func (b *bench) close() error {
	var errs []error
	if b.iggy != nil {
		errs = append(errs, b.deleteTopics())
		b.iggy.Close()
	}
	if b.kafka != nil {
		b.kafka.close()
	}
	if b.gw != nil {
		if err := b.gw.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("gateway exited with %v\n%s", err, b.gw.Output))
		}
	}
	if b.mem != nil {
		b.mem.Close()
	}
	if b.buildDir != "" {
		os.RemoveAll(b.buildDir)
	}
	return errors.Join(errs...)
}

// legResult is the measurement of one leg.
type legResult struct {
	Name    string
	Records int64 // records written, or distinct records verified
	Bytes   int64 // value bytes of Records
	Elapsed time.Duration
	// Requests are produce or fetch requests through the gateway, sends or polls directly.
	Requests *latencies
	// RecordLatency is from Produce to the record's promise (gateway produce only).
	RecordLatency *latencies
	// EndToEnd is from a record's due time to its consumer (rate-limited legs, whose
	// Requests hold each record's due time to its acknowledgement); PaceRate is their rate.
	EndToEnd *latencies
	PaceRate float64
	// GatewayCPU and GatewayPeakRSS are measured when the gateway's pid is known and the leg
	// goes through it.
	GatewayCPU      time.Duration
	GatewayPeakRSS  int64
	GatewayMeasured bool
	// IggyCPU is the external Iggy server's CPU (--iggy-pid) during a gateway or direct leg.
	IggyCPU      time.Duration
	IggyMeasured bool
	// ToolCPU is this process: load generator, verifier and, by default, the Iggy server.
	ToolCPU time.Duration
	// MeanBatch is the mean records per produce batch (franz-go) or send (direct).
	MeanBatch float64
	// WireRatio is compressed/uncompressed bytes of franz-go's batches (gateway produce).
	WireRatio float64
	Verify    *verifyReport // consume legs
	Profile   string        // CPU profile path
	// Floor is the socket floor measured right after the round's gateway produce leg.
	Floor *socketFloor
	// Rebalance is what a rebalance leg measured (Records: distinct records processed).
	Rebalance *rebalanceReport
	Err       error
}

func newLegResult(name string) *legResult {
	return &legResult{Name: name, Requests: &latencies{}, RecordLatency: &latencies{}, EndToEnd: &latencies{}}
}

// rate returns records/s and MB/s (10^6 bytes of record values).
func (r *legResult) rate() (recs, mb float64) {
	s := r.Elapsed.Seconds()
	if s <= 0 {
		return 0, 0
	}
	return float64(r.Records) / s, float64(r.Bytes) / s / 1e6
}

// measure runs one leg of round n and fills in its resource figures: the gateway process's
// CPU and peak RSS (when the leg goes through the gateway and its pid is known), this
// process's CPU and, when the gateway was built with the hook, a CPU profile.
func (b *bench) measure(ctx context.Context, n int, l leg) *legResult {
	fmt.Fprintf(b.progress, "  %s\n", l.name)
	r := newLegResult(l.name)
	pid := b.gwPID // the server whose CPU and RSS are measured
	if l.viaKafka {
		pid = b.o.KafkaPID
	}
	gw := (l.viaGateway || l.viaKafka) && pid != 0
	var cpu0 time.Duration
	if gw {
		if err := resetPeakRSS(pid); err != nil {
			fmt.Fprintf(b.progress, "  cannot reset the gateway's peak RSS (%v): the figure covers the whole run so far\n", err)
		}
		var err error
		if cpu0, err = procCPU(pid); err != nil {
			fmt.Fprintf(b.progress, "  gateway CPU not measured: %v\n", err)
			gw = false
		}
	}
	profiling := l.viaGateway && b.prof != nil
	if profiling {
		if err := b.prof.start(ctx); err != nil {
			r.Err = err
			return r
		}
	}
	iggy := b.o.IggyPID != 0 && !l.viaKafka
	iggy0, err := time.Duration(0), error(nil)
	if iggy {
		if iggy0, err = procCPU(b.o.IggyPID); err != nil {
			fmt.Fprintf(b.progress, "  Iggy server CPU not measured: %v\n", err)
			iggy = false
		}
	}
	self0 := selfCPU()
	r.Err = l.run(ctx, r)
	r.ToolCPU = selfCPU() - self0
	if iggy {
		if iggy1, err := procCPU(b.o.IggyPID); err != nil {
			fmt.Fprintf(b.progress, "  Iggy server CPU not measured: %v\n", err)
		} else {
			r.IggyCPU, r.IggyMeasured = iggy1-iggy0, true
		}
	}
	if gw {
		cpu1, err1 := procCPU(pid)
		rss, err2 := childproc.PeakRSS(pid)
		if err := errors.Join(err1, err2); err != nil {
			fmt.Fprintf(b.progress, "  gateway CPU/RSS not measured: %v\n", err)
		} else {
			r.GatewayCPU, r.GatewayPeakRSS, r.GatewayMeasured = cpu1-cpu0, rss, true
		}
	}
	if profiling {
		// "produce gateway" in round 2 → gateway-produce.2.cpu.pprof; "produce gateway
		// idempotence-off" → gateway-produce-idempotence-off.2.cpu.pprof
		words := strings.Fields(l.name)
		name := fmt.Sprintf("%s.%d", strings.Join(append(words[:1:1], words[2:]...), "-"), n)
		path, err := b.prof.stop(context.WithoutCancel(ctx), name)
		if err != nil {
			r.Err = errors.Join(r.Err, err)
		}
		r.Profile = path
	}
	if r.Err != nil {
		fmt.Fprintf(b.progress, "  %s failed: %v\n", l.name, r.Err)
	}
	return r
}
