package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// goalRatio is the target for later work: gateway throughput at least this share of direct.
const goalRatio = 0.80

// legSummary is one leg over every round that ran it without error.
type legSummary struct {
	Name                string
	Rounds, Failed      int
	RecordsPerSec, MBps float64 // medians over rounds
	Requests, Records   percentiles
	PerRequest          float64 // records per produce batch, direct send, fetch or poll
	GatewayCPUPerGB     float64 // -1: not measured
	GatewayPeakRSS      int64
	IggyCPUPerGB        float64 // external Iggy server (--iggy-pid); -1: not measured
	ToolCPUPerGB        float64
	WireRatio           float64 // compressed/uncompressed, gateway produce
	Verified            int     // records verified per round (consume legs)
	EndToEnd            percentiles
	PaceRates           []float64 // rate of each round (rate-limited legs)
}

func summarize(name string, legs []*legResult) legSummary {
	s := legSummary{Name: name, GatewayCPUPerGB: -1, IggyCPUPerGB: -1}
	var rates, mbs []float64
	var reqs, recs, e2e []*latencies
	var bytes, gwBytes, iggyBytes int64
	var tool, gwCPU, iggyCPU time.Duration
	var records, batches float64
	for _, l := range legs {
		if l.Err != nil {
			s.Failed++
			continue
		}
		s.Rounds++
		r, mb := l.rate()
		rates, mbs = append(rates, r), append(mbs, mb)
		reqs, recs, e2e = append(reqs, l.Requests), append(recs, l.RecordLatency), append(e2e, l.EndToEnd)
		if l.PaceRate > 0 {
			s.PaceRates = append(s.PaceRates, l.PaceRate)
		}
		bytes += l.Bytes
		tool += l.ToolCPU
		if l.GatewayMeasured {
			gwCPU += l.GatewayCPU
			gwBytes += l.Bytes
			s.GatewayPeakRSS = max(s.GatewayPeakRSS, l.GatewayPeakRSS)
		}
		if l.IggyMeasured {
			iggyCPU += l.IggyCPU
			iggyBytes += l.Bytes
		}
		records += float64(l.Records)
		if l.MeanBatch > 0 {
			batches += float64(l.Records) / l.MeanBatch
		} else {
			batches += float64(l.Requests.summary().N)
		}
		s.WireRatio = l.WireRatio
		if l.Verify != nil {
			s.Verified = l.Verify.Valid
		}
	}
	if s.Rounds == 0 {
		return s
	}
	s.RecordsPerSec, s.MBps = median(rates), median(mbs)
	s.Requests, s.Records, s.EndToEnd = merged(reqs...), merged(recs...), merged(e2e...)
	if batches > 0 {
		s.PerRequest = records / batches
	}
	if gwBytes > 0 {
		s.GatewayCPUPerGB = gwCPU.Seconds() / (float64(gwBytes) / 1e9)
	}
	if iggyBytes > 0 {
		s.IggyCPUPerGB = iggyCPU.Seconds() / (float64(iggyBytes) / 1e9)
	}
	if bytes > 0 {
		s.ToolCPUPerGB = tool.Seconds() / (float64(bytes) / 1e9)
	}
	return s
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else if n > 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return 0
}

// ratios returns gateway/direct records-per-second of each round where both legs succeeded.
func ratios(r *result, gateway, direct string) []float64 {
	var out []float64
	for _, round := range r.Rounds {
		var g, d *legResult
		for _, l := range round {
			switch l.Name {
			case gateway:
				g = l
			case direct:
				d = l
			}
		}
		if g == nil || d == nil || g.Err != nil || d.Err != nil {
			continue
		}
		gr, _ := g.rate()
		dr, _ := d.rate()
		if dr > 0 {
			out = append(out, gr/dr)
		}
	}
	return out
}

// printReport writes the result table, the ratios and any failures.
func printReport(w io.Writer, r *result) {
	o := r.Options
	fmt.Fprintf(w, "\n%d records × %d B per leg, %d round(s), codec %s, acks %s, linger %s, batch ≤ %d B, %d partitions, %d producer(s), topic flush %s\n",
		o.Records, o.RecordSize, o.Rounds, o.Codec, o.Acks, o.Linger, o.BatchBytes, o.Partitions, o.Producers, o.TopicFlush)
	fmt.Fprintf(w, "Iggy: %s\ngateway: %s\n", r.Iggy, r.Gateway)
	fmt.Fprintf(w, "load average before %s, after %s; whole run %s\n\n", r.LoadBefore, r.LoadAfter, r.Total.Round(time.Millisecond))

	var names []string
	for _, round := range r.Rounds {
		for _, l := range round {
			if !slices.Contains(names, l.Name) {
				names = append(names, l.Name)
			}
		}
	}
	sums := map[string]legSummary{}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// srv: the gateway in gateway legs, the Kafka broker in kafka legs (when their pids are known).
	// iggy: an external Iggy server (--iggy-pid), in gateway and direct legs.
	fmt.Fprintln(tw, "leg\trecords/s\tMB/s\treq p50\treq p99\treq p999\trecs/req\tsrv CPU s/GB\tsrv peak RSS\tiggy CPU s/GB\ttool CPU s/GB\t")
	for _, name := range names {
		s := summarize(name, r.leg(name))
		sums[name] = s
		if isPaced(name) || isRebalance(name) || name == legSocketFloor {
			continue
		}
		if s.Rounds == 0 {
			fmt.Fprintf(tw, "%s\tfailed\t\t\t\t\t\t\t\t\t\t\n", name)
			continue
		}
		gwCPU, gwRSS := "-", "-"
		if s.GatewayCPUPerGB >= 0 {
			gwCPU, gwRSS = fmt.Sprintf("%.2f", s.GatewayCPUPerGB), fmt.Sprintf("%.0f MiB", float64(s.GatewayPeakRSS)/(1<<20))
		}
		iggyCPU := "-"
		if s.IggyCPUPerGB >= 0 {
			iggyCPU = fmt.Sprintf("%.2f", s.IggyCPUPerGB)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.1f\t%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%.2f\t\n", name, s.RecordsPerSec, s.MBps,
			ms(s.Requests.P50), ms(s.Requests.P99), ms(s.Requests.P999), s.PerRequest, gwCPU, gwRSS, iggyCPU, s.ToolCPUPerGB)
	}
	tw.Flush()
	printRoundRates(w, r, names)

	if s, ok := sums[legProduceGateway]; ok && s.Records.N > 0 {
		p := s.Records
		fmt.Fprintf(w, "\nproduce gateway, per record (Produce call to promise): p50 %s, p99 %s, p999 %s", ms(p.P50), ms(p.P99), ms(p.P999))
		if s.WireRatio > 0 && o.Codec != "none" {
			fmt.Fprintf(w, "; %s batches at %.0f%% of their uncompressed size", o.Codec, 100*s.WireRatio)
		}
		fmt.Fprintln(w)
		printFloor(w, r)
	}
	fmt.Fprintln(w)
	for _, pair := range [][2]string{{legProduceGateway, legProduceDirect}, {legConsumeGateway, legConsumeDirect}, {legProduceGateway, legProduceKafka}, {legConsumeGateway, legConsumeKafka}} {
		if _, ok := sums[pair[0]]; !ok {
			continue
		}
		if _, ok := sums[pair[1]]; !ok {
			continue
		}
		what, other := strings.Fields(pair[0])[0], strings.Fields(pair[1])[1]
		rs := ratios(r, pair[0], pair[1])
		if len(rs) == 0 {
			fmt.Fprintf(w, "gateway/%s %s rate: not comparable (legs failed)\n", other, what)
			continue
		}
		if other == "kafka" {
			printKafkaRatio(w, rs, sums[pair[0]], sums[pair[1]], what)
			continue
		}
		m := median(rs)
		verdict := "below"
		if m >= goalRatio {
			verdict = "meets"
		}
		fmt.Fprintf(w, "gateway/direct %s rate: %.2f median of rounds [%s] (%s the %.0f%% goal)\n",
			what, m, twoDecimals(rs), verdict, 100*goalRatio)
		if g, d := sums[pair[0]], sums[pair[1]]; r.IggyInProcess && g.GatewayCPUPerGB >= 0 && d.ToolCPUPerGB > 0 {
			path := g.GatewayCPUPerGB + g.ToolCPUPerGB
			fmt.Fprintf(w, "  CPU s/GB: gateway path %.2f (gateway %.2f + this process %.2f), direct %.2f; when the machine's CPUs are the limit, the ratio is at most %.2f\n",
				path, g.GatewayCPUPerGB, g.ToolCPUPerGB, d.ToolCPUPerGB, d.ToolCPUPerGB/path)
		}
		if g, d := sums[pair[0]], sums[pair[1]]; g.IggyCPUPerGB >= 0 && d.IggyCPUPerGB > 0 {
			fmt.Fprintf(w, "  Iggy server CPU s/GB: gateway path %.2f, direct %.2f (gateway/direct %.2f)\n",
				g.IggyCPUPerGB, d.IggyCPUPerGB, g.IggyCPUPerGB/d.IggyCPUPerGB)
		}
	}
	if _, ok := sums[legProduceNoIdem]; ok {
		if rs := ratios(r, legProduceGateway, legProduceNoIdem); len(rs) > 0 {
			fmt.Fprintf(w, "idempotence on/off produce rate (same gateway, same run): %.2f median of rounds [%s]\n", median(rs), twoDecimals(rs))
		} else {
			fmt.Fprintln(w, "idempotence on/off produce rate: not comparable (legs failed)")
		}
	}
	printLatency(w, names, sums)
	printRebalance(w, r)
	for _, name := range names {
		if s := sums[name]; s.Verified > 0 {
			fmt.Fprintf(w, "%s: verified %d records in each of %d round(s) (count, partition, per-producer order, checksum)\n", name, s.Verified, s.Rounds)
		}
	}
	if o.ProfileDir != "" {
		for _, what := range []string{"produce", "consume"} {
			glob := filepath.Join(o.ProfileDir, "gateway-"+what+".*.cpu.pprof")
			fmt.Fprintf(w, "gateway CPU profiles of the %s legs: %s (all rounds: go tool pprof -top %s)\n", what, glob, glob)
		}
	}
	for i, round := range r.Rounds {
		for _, l := range round {
			if l.Err != nil {
				fmt.Fprintf(w, "FAILED %s in round %d: %v\n", l.Name, i+1, l.Err)
			}
		}
	}
	if r.TeardownErr != nil {
		fmt.Fprintf(w, "FAILED: %v\n", r.TeardownErr)
	}
}

// printRoundRates prints each throughput leg's records/s in every round, in thousands, so that
// drift over a run (a broker warming up, a busy machine) shows beside the medians.
func printRoundRates(w io.Writer, r *result, names []string) {
	if len(r.Rounds) < 2 {
		return
	}
	fmt.Fprintln(w, "\nrecords/s by round (thousands):")
	for _, name := range names {
		if isPaced(name) || isRebalance(name) || name == legSocketFloor {
			continue
		}
		each := make([]string, 0, len(r.Rounds))
		for _, l := range r.leg(name) {
			if l.Err != nil {
				each = append(each, "failed")
				continue
			}
			recs, _ := l.rate()
			each = append(each, fmt.Sprintf("%.0f", recs/1000))
		}
		fmt.Fprintf(w, "  %s: %s\n", name, strings.Join(each, " "))
	}
}

// printFloor prints the socket floor of the rounds (floor.go) and, when the gateway's CPU
// was measured, the gateway's produce CPU per GB as a multiple of the floor of its round.
func printFloor(w io.Writer, r *result) {
	var floors, multiples []float64
	var receives, sends []float64
	for _, round := range r.Rounds {
		var g, f *legResult
		for _, l := range round {
			switch {
			case l.Name == legProduceGateway:
				g = l
			case l.Name == legSocketFloor && l.Err == nil && l.Floor != nil && l.Floor.Bytes > 0:
				f = l
			}
		}
		if f == nil {
			continue
		}
		rcv, snd := f.Floor.perGB()
		receives, sends, floors = append(receives, rcv), append(sends, snd), append(floors, rcv+snd)
		if g != nil && g.Err == nil && g.GatewayMeasured && g.Bytes > 0 && rcv+snd > 0 {
			multiples = append(multiples, g.GatewayCPU.Seconds()/(float64(g.Bytes)/1e9)/(rcv+snd))
		}
	}
	if len(floors) == 0 {
		return
	}
	fmt.Fprintf(w, "socket floor (a relay moving the same bytes from one loopback connection to another, on this machine now): %.2f s/GB, median of rounds [%s] (its receive %.2f and send %.2f, medians of their own)\n",
		median(floors), twoDecimals(floors), median(receives), median(sends))
	if len(multiples) > 0 {
		fmt.Fprintf(w, "  gateway produce CPU per GB: %.2f× the floor of its round, median of rounds [%s]\n", median(multiples), twoDecimals(multiples))
	}
}

// printKafkaRatio prints the gateway/Kafka rate of each round and, when both servers were
// measured, their CPU per GB.
func printKafkaRatio(w io.Writer, rs []float64, g, k legSummary, what string) {
	each := make([]string, len(rs))
	for i, x := range rs {
		each[i] = fmt.Sprintf("%.2f", x)
	}
	fmt.Fprintf(w, "gateway/kafka %s rate: %.2f median of rounds [%s]\n", what, median(rs), strings.Join(each, " "))
	switch {
	case g.GatewayCPUPerGB >= 0 && g.IggyCPUPerGB >= 0 && k.GatewayCPUPerGB > 0:
		server := g.GatewayCPUPerGB + g.IggyCPUPerGB
		fmt.Fprintf(w, "  server CPU s/GB: gateway %.2f + Iggy server %.2f = %.2f, Kafka broker %.2f (gateway+Iggy/kafka %.2f)\n",
			g.GatewayCPUPerGB, g.IggyCPUPerGB, server, k.GatewayCPUPerGB, server/k.GatewayCPUPerGB)
	case g.GatewayCPUPerGB >= 0 && k.GatewayCPUPerGB > 0:
		fmt.Fprintf(w, "  server CPU s/GB: gateway %.2f, Kafka broker %.2f (gateway/kafka %.2f; an Iggy server outside this process is not counted: --iggy-pid)\n",
			g.GatewayCPUPerGB, k.GatewayCPUPerGB, g.GatewayCPUPerGB/k.GatewayCPUPerGB)
	}
}

// ms formats a latency in milliseconds; "-" when nothing was measured.
func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
}

// twoDecimals formats xs as space-separated numbers with two decimals.
func twoDecimals(xs []float64) string {
	each := make([]string, len(xs))
	for i, x := range xs {
		each[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(each, " ")
}

// latencyGoal is how much higher the gateway's p99 may be than Kafka's at the same fixed rate.
const latencyGoal = 5 * time.Millisecond

func isPaced(name string) bool { return strings.HasPrefix(name, "latency ") }

// printLatency writes the table of the rate-limited legs and, with a Kafka leg, the
// gateway's p99 against Kafka's.
func printLatency(w io.Writer, names []string, sums map[string]legSummary) {
	var paced []string
	for _, name := range names {
		if isPaced(name) {
			paced = append(paced, name)
		}
	}
	if len(paced) == 0 {
		return
	}
	fmt.Fprintln(w, "\nat a fixed rate (latency from each record's due time; warm-up not counted):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "leg\trate/s (rounds)\tproduce p50\tp99\tp999\tend-to-end p50\tp99\tp999\tsrv CPU s/GB\t")
	for _, name := range paced {
		s := sums[name]
		if s.Rounds == 0 {
			fmt.Fprintf(tw, "%s\tfailed\t\t\t\t\t\t\t\t\n", name)
			continue
		}
		rates := make([]string, len(s.PaceRates))
		for i, x := range s.PaceRates {
			rates[i] = fmt.Sprintf("%.0f", x)
		}
		cpu := "-"
		if s.GatewayCPUPerGB >= 0 {
			cpu = fmt.Sprintf("%.2f", s.GatewayCPUPerGB)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, strings.Join(rates, " "),
			ms(s.Requests.P50), ms(s.Requests.P99), ms(s.Requests.P999), ms(s.EndToEnd.P50), ms(s.EndToEnd.P99), ms(s.EndToEnd.P999), cpu)
	}
	tw.Flush()
	g, k := sums[legLatencyGateway], sums[legLatencyKafka]
	if g.Rounds == 0 || k.Rounds == 0 {
		return
	}
	fmt.Fprintf(w, "gateway p99 against kafka p99 + %s: produce %s, end-to-end %s\n", ms(latencyGoal),
		latencyVerdict(g.Requests.P99, k.Requests.P99), latencyVerdict(g.EndToEnd.P99, k.EndToEnd.P99))
}

// latencyVerdict compares the gateway's p99 with Kafka's plus latencyGoal.
func latencyVerdict(gateway, kafka time.Duration) string {
	verdict := "meets"
	if gateway > kafka+latencyGoal {
		verdict = "misses"
	}
	return fmt.Sprintf("%s vs %s (%+.2fms, %s the goal)", ms(gateway), ms(kafka), float64(gateway-kafka)/float64(time.Millisecond), verdict)
}
