package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// goalRatio is the target for later work: gateway throughput at least this share of direct.
const goalRatio = 0.80

// printReport writes the result table, the ratios and any failures.
func printReport(w io.Writer, r *result) {
	o := r.Options
	fmt.Fprintf(w, "\n%d records × %d B per leg, codec %s, acks %s, linger %s, batch ≤ %d B, %d partitions, %d producer(s)\n",
		o.Records, o.RecordSize, o.Codec, o.Acks, o.Linger, o.BatchBytes, o.Partitions, o.Producers)
	fmt.Fprintf(w, "Iggy: %s\ngateway: %s\n", r.Iggy, r.Gateway)
	fmt.Fprintf(w, "load average before %s, after %s; whole run %s\n\n", r.LoadBefore, r.LoadAfter, r.Total.Round(time.Millisecond))

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "leg\trecords/s\tMB/s\treq p50\treq p99\treq p999\trecs/req\tgw CPU s/GB\tgw peak RSS\ttool CPU s/GB\t")
	for _, l := range r.Legs {
		recs, mb := l.rate()
		gwCPU, gwRSS := "-", "-"
		if l.GatewayMeasured {
			gwCPU, gwRSS = perGB(l.GatewayCPU, l.Bytes), mib(l.GatewayPeakRSS)
		}
		perReq := "-"
		if l.MeanBatch > 0 {
			perReq = fmt.Sprintf("%.0f", l.MeanBatch)
		} else if l.Requests.N > 0 && l.Records > 0 {
			perReq = fmt.Sprintf("%.0f", float64(l.Records)/float64(l.Requests.N))
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", l.Name, recs, mb,
			ms(l.Requests.P50), ms(l.Requests.P99), ms(l.Requests.P999), perReq, gwCPU, gwRSS, perGB(l.ToolCPU, l.Bytes))
	}
	tw.Flush()

	if l := r.leg(legProduceGateway); l != nil && l.RecordLatency.N > 0 {
		p := l.RecordLatency
		fmt.Fprintf(w, "\nproduce gateway, per record (Produce call to promise): p50 %s, p99 %s, p999 %s", ms(p.P50), ms(p.P99), ms(p.P999))
		if l.WireRatio > 0 && o.Codec != "none" {
			fmt.Fprintf(w, "; %s batches at %.0f%% of their uncompressed size", o.Codec, 100*l.WireRatio)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	for _, pair := range [][2]string{{legProduceGateway, legProduceDirect}, {legConsumeGateway, legConsumeDirect}} {
		gw, direct := r.leg(pair[0]), r.leg(pair[1])
		if gw == nil || direct == nil {
			continue
		}
		what := strings.Fields(pair[0])[0]
		if gw.Err != nil || direct.Err != nil {
			fmt.Fprintf(w, "gateway/direct %s: not comparable (a leg failed)\n", what)
			continue
		}
		g, _ := gw.rate()
		d, _ := direct.rate()
		verdict := "below"
		if g >= goalRatio*d {
			verdict = "meets"
		}
		fmt.Fprintf(w, "gateway/direct %s rate: %.2f (%s the %.0f%% goal)\n", what, g/d, verdict, 100*goalRatio)
	}
	for _, l := range r.Legs {
		if l.Verify != nil && l.Err == nil {
			fmt.Fprintf(w, "%s: verified %d records (count, partition, per-producer order, checksum)\n", l.Name, l.Verify.Valid)
		}
		if l.Profile != "" {
			fmt.Fprintf(w, "%s: CPU profile %s (go tool pprof -top %s)\n", l.Name, l.Profile, l.Profile)
		}
	}
	for _, l := range r.Legs {
		if l.Err != nil {
			fmt.Fprintf(w, "FAILED %s: %v\n", l.Name, l.Err)
		}
	}
	if r.TeardownErr != nil {
		fmt.Fprintf(w, "FAILED at teardown: %v\n", r.TeardownErr)
	}
}

// ms formats a latency in milliseconds; "-" when nothing was measured.
func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
}

// perGB is CPU seconds per 10^9 bytes of record values moved.
func perGB(cpu time.Duration, bytes int64) string {
	if bytes == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", cpu.Seconds()/(float64(bytes)/1e9))
}

func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }
