package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/childproc"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

// needGateway skips tests that build and start the gateway in -short runs, as the end-to-end
// tests do, unless IGGYGW_E2E_REQUIRED=1 (CI) makes them mandatory.
func needGateway(t *testing.T) {
	t.Helper()
	if testing.Short() && os.Getenv("IGGYGW_E2E_REQUIRED") != "1" {
		t.Skip("builds and starts the gateway; skipped in -short runs")
	}
}

func tinyOptions() *Options {
	o := defaultOptions()
	o.Records, o.RecordSize, o.Partitions, o.Producers, o.Rounds = 3000, 100, 3, 2, 1
	o.StallTimeout = 20 * time.Second
	o.LatencyDuration = 600 * time.Millisecond
	return &o
}

// TestCompareRunsEveryLeg runs the whole comparison with a tiny load, lz4 compression and the
// profiling hook, and checks that every leg ran, verified every record and was measured.
func TestCompareRunsEveryLeg(t *testing.T) {
	needGateway(t)
	o := tinyOptions()
	o.Codec, o.Rounds = "lz4", 2
	o.ProfileDir = t.TempDir()
	o.IdempotenceOffLeg = true
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var progress bytes.Buffer
	res, err := compare(ctx, o, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	var out bytes.Buffer
	printReport(&out, res)
	t.Logf("report:\n%s", out.String())
	if !res.ok() {
		t.Fatalf("comparison failed:\n%s\n%s", progress.String(), out.String())
	}
	for _, name := range []string{legProduceGateway, legProduceNoIdem, legProduceDirect, legConsumeGateway, legConsumeDirect} {
		legs := res.leg(name)
		if len(legs) != o.Rounds {
			t.Fatalf("leg %q ran %d times, want %d", name, len(legs), o.Rounds)
		}
		for i, l := range legs {
			switch {
			case l.Records != int64(o.Records) || l.Elapsed <= 0 || l.Requests.summary().N == 0:
				t.Errorf("%s round %d: %d records in %s over %d requests", name, i+1, l.Records, l.Elapsed, l.Requests.summary().N)
			case strings.Contains(name, "gateway") && (!l.GatewayMeasured || l.GatewayPeakRSS <= 0):
				t.Errorf("%s round %d: gateway resources not measured", name, i+1)
			}
			if strings.HasPrefix(name, "consume") && (l.Verify == nil || l.Verify.Valid != o.Records) {
				t.Errorf("%s round %d: verification %+v", name, i+1, l.Verify)
			}
			if strings.Contains(name, "gateway") {
				prof, err := os.ReadFile(l.Profile)
				if err != nil || !bytes.HasPrefix(prof, []byte{0x1f, 0x8b}) {
					t.Errorf("%s round %d: profile %q: %v, %d bytes", name, i+1, l.Profile, err, len(prof))
				}
			}
		}
	}
	for i, pg := range res.leg(legProduceGateway) {
		if pg.RecordLatency.summary().N != o.Records || pg.WireRatio <= 0 || pg.WireRatio >= 1 {
			t.Errorf("produce gateway round %d: %d record latencies, lz4 wire ratio %.2f", i+1, pg.RecordLatency.summary().N, pg.WireRatio)
		}
		// The direct leg sent batches of the sizes franz-go cut.
		if pd := res.leg(legProduceDirect)[i]; pg.MeanBatch != pd.MeanBatch {
			t.Errorf("round %d: records per batch: gateway %.1f, direct %.1f", i+1, pg.MeanBatch, pd.MeanBatch)
		}
	}
	if on, off := res.leg(legProduceGateway)[0].Profile, res.leg(legProduceNoIdem)[0].Profile; on == off {
		t.Errorf("the produce legs with idempotence on and off wrote the same profile %s", on)
	}
	checkPacedLegs(t, res, legLatencyGateway, legLatencyDirect)
	if floors := res.leg(legSocketFloor); len(floors) != o.Rounds || floors[0].Floor == nil || floors[0].Floor.Bytes < int64(o.Records*o.RecordSize) {
		t.Errorf("socket floor: %d measurements, first %+v", len(floors), floors[0].Floor)
	}
	for _, want := range []string{"gateway/direct produce rate", "records/s by round (thousands):\n  produce gateway: ", "socket floor (", "gateway produce CPU per GB:", "gateway/direct consume rate", "idempotence on/off produce rate (same gateway, same run)", "verified 3000 records in each of 2 round(s)", "when the machine's CPUs are the limit", "at a fixed rate"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report without %q:\n%s", want, out.String())
		}
	}
}

// TestConsumersReportBadRecords stores a corrupt record and a duplicate in each topic after
// the produce legs and checks that both consumers report them: the verification can fail.
func TestConsumersReportBadRecords(t *testing.T) {
	needGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o := tinyOptions()
	var err error
	if o.GatewayBin, err = buildGateway(ctx, t.TempDir(), false); err != nil {
		t.Fatal(err)
	}
	b, err := newBench(ctx, o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.close(); err != nil {
			t.Error(err)
		}
	}()
	if err := b.createTopics(ctx); err != nil {
		t.Fatal(err)
	}
	for _, path := range []struct {
		topic            string
		produce, consume func(context.Context, *legResult) error
	}{
		{b.gwTopic, b.produceGateway, b.consumeGateway},
		{b.directTopic, b.produceDirect, b.consumeDirect},
	} {
		if err := path.produce(ctx, newLegResult("produce")); err != nil {
			t.Fatalf("%s: produce: %v", path.topic, err)
		}
		corrupt := make([]byte, o.RecordSize)
		fillValue(corrupt, 5)
		corrupt[50] ^= 0x40
		duplicate := make([]byte, o.RecordSize)
		fillValue(duplicate, 0) // record 0 belongs to partition 0
		headers, err := gatewayHeaders()
		if err != nil {
			t.Fatal(err)
		}
		msgs := []iggy.Message{{Payload: corrupt, Headers: headers}, {Payload: duplicate, Headers: headers}}
		if _, err := b.iggy.SendMessages(ctx, iggy.Name(o.IggyStream), iggy.Name(path.topic), 0, msgs); err != nil {
			t.Fatal(err)
		}
		r := newLegResult("consume")
		err = path.consume(ctx, r)
		if err == nil || !strings.Contains(err.Error(), "1 duplicated, 1 corrupt") {
			t.Errorf("%s: consume error %v, want one duplicated and one corrupt record", path.topic, err)
		}
		if r.Verify == nil || r.Verify.Valid != o.Records || r.Verify.Consumed != o.Records+2 {
			t.Errorf("%s: verification %+v", path.topic, r.Verify)
		}
	}
}

// TestCompareKafkaLegs runs the franz-go legs against a second Kafka API server as well (a
// gateway over its own in-memory Iggy server stands in for a Kafka broker: the legs only use
// the Kafka protocol and admin API) and checks they ran, verified, were measured and are
// compared in the report.
func TestCompareKafkaLegs(t *testing.T) {
	needGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o := tinyOptions()
	o.Direct = false
	var err error
	if o.GatewayBin, err = buildGateway(ctx, t.TempDir(), false); err != nil {
		t.Fatal(err)
	}
	ms, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0", RootUsername: "iggy", RootPassword: "iggy"})
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Close()
	broker, err := startGateway(ctx, o.GatewayBin, childproc.Iggy{Addr: ms.Addr(), Username: "iggy", Password: "iggy", Stream: "kafka"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Stop()
	o.KafkaAddr, o.KafkaPID = broker.Addr, broker.PID()
	// The tool's own gateway legs go to a second server in this process, measured as an
	// external Iggy server (--iggy-pid).
	iggySrv, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0", RootUsername: "iggy", RootPassword: "iggy"})
	if err != nil {
		t.Fatal(err)
	}
	defer iggySrv.Close()
	o.IggyAddr, o.IggyPID = iggySrv.Addr(), os.Getpid()

	res, err := compare(ctx, o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printReport(&out, res)
	if !res.ok() {
		t.Fatalf("comparison failed:\n%s", out.String())
	}
	for _, name := range []string{legProduceKafka, legConsumeKafka} {
		for i, l := range res.leg(name) {
			if l.Records != int64(o.Records) || !l.GatewayMeasured || l.GatewayPeakRSS <= 0 {
				t.Errorf("%s round %d: %d records, server measured %v", name, i+1, l.Records, l.GatewayMeasured)
			}
			if name == legConsumeKafka && (l.Verify == nil || l.Verify.Valid != o.Records) {
				t.Errorf("%s round %d: verification %+v", name, i+1, l.Verify)
			}
		}
	}
	for _, name := range []string{legProduceGateway, legConsumeGateway, legProduceKafka} {
		for i, l := range res.leg(name) {
			if want := !strings.HasSuffix(name, "kafka"); l.IggyMeasured != want {
				t.Errorf("%s round %d: Iggy server measured %v, want %v", name, i+1, l.IggyMeasured, want)
			}
		}
	}
	// (Server CPU is not compared here: a tiny load takes less than /proc's 10 ms resolution.)
	checkPacedLegs(t, res, legLatencyGateway, legLatencyKafka)
	for _, want := range []string{"gateway/kafka produce rate", "gateway/kafka consume rate", "iggy CPU s/GB", "gateway p99 against kafka p99 + 5.00ms: produce"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report without %q:\n%s", want, out.String())
		}
	}
}

// checkPacedLegs checks that the rate-limited legs ran at half of the round's lowest produce
// rate, delivered and verified every record and measured both latencies.
func checkPacedLegs(t *testing.T, res *result, names ...string) {
	t.Helper()
	for _, name := range names {
		legs := res.leg(name)
		if len(legs) != res.Options.Rounds {
			t.Fatalf("leg %q ran %d times, want %d", name, len(legs), res.Options.Rounds)
		}
		for i, l := range legs {
			lowest := 0.0
			for _, other := range res.Rounds[i] {
				if r, _ := other.rate(); strings.HasPrefix(other.Name, "produce ") && (lowest == 0 || r < lowest) {
					lowest = r
				}
			}
			want := int64(max(1, int(lowest/2*res.Options.LatencyDuration.Seconds())))
			switch {
			case l.PaceRate != lowest/2:
				t.Errorf("%s round %d: rate %.0f, want half of %.0f", name, i+1, l.PaceRate, lowest)
			case l.Records != want || l.Verify == nil || !l.Verify.ok():
				t.Errorf("%s round %d: %d records verified of %d: %+v", name, i+1, l.Records, want, l.Verify)
			case l.Requests.summary().N == 0 || l.EndToEnd.summary().N == 0:
				t.Errorf("%s round %d: %d produce and %d end-to-end latencies", name, i+1, l.Requests.summary().N, l.EndToEnd.summary().N)
			}
		}
	}
}

// The report says how large the started gateway's tail cache was: by default it depends on
// the machine.
func TestTailCacheOf(t *testing.T) {
	if got := tailCacheOf([]string{"IGGY_KAFKA_TAIL_CACHE_BYTES=512MiB"}); got != "tail cache 512 MiB (--gateway-env)" {
		t.Errorf("set: %q", got)
	}
	if got := tailCacheOf(nil); !strings.HasPrefix(got, "tail cache ") || !strings.Contains(got, "MiB (") {
		t.Errorf("default: %q", got)
	}
	if got := tailCacheOf([]string{"IGGY_KAFKA_TAIL_CACHE_BYTES=lots"}); !strings.HasPrefix(got, "tail cache unknown") {
		t.Errorf("bad value: %q", got)
	}
}
