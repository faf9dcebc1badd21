package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/config"
)

// result is one comparison run.
type result struct {
	Options Options
	Iggy    string // what Iggy server was used
	// IggyInProcess: the in-memory server ran in this process, so its CPU is in ToolCPU on
	// both paths and the whole-path CPU comparison is complete.
	IggyInProcess bool
	Gateway       string // what gateway was used
	LoadBefore    string // load averages before and after the rounds
	LoadAfter     string
	// Rounds holds each round's legs, in the order they ran.
	Rounds      [][]*legResult
	Total       time.Duration
	TeardownErr error
}

// ok reports whether every leg of every round ran without error and verified every record.
func (r *result) ok() bool {
	for _, round := range r.Rounds {
		for _, l := range round {
			if l.Err != nil {
				return false
			}
		}
	}
	return r.TeardownErr == nil && len(r.Rounds) == r.Options.Rounds
}

// leg returns the results of the leg called name, one per round that ran it.
func (r *result) leg(name string) []*legResult {
	var out []*legResult
	for _, round := range r.Rounds {
		for _, l := range round {
			if l.Name == name {
				out = append(out, l)
			}
		}
	}
	return out
}

// Leg names.
const (
	legProduceGateway = "produce gateway"
	legProduceDirect  = "produce direct"
	// legProduceNoIdem is produce gateway with the client's idempotent writes off.
	legProduceNoIdem    = "produce gateway idempotence-off"
	legConsumeGateway   = "consume gateway"
	legConsumeDirect    = "consume direct"
	legProduceKafka     = "produce kafka"
	legConsumeKafka     = "consume kafka"
	legLatencyGateway   = "latency gateway"
	legLatencyDirect    = "latency direct"
	legLatencyKafka     = "latency kafka"
	legRebalanceGateway = "rebalance gateway"
	legRebalanceKafka   = "rebalance kafka"
	// legSocketFloor is not a path: a relay's CPU per GB over loopback (floor.go), right after
	// produce gateway, for the report's floor line.
	legSocketFloor = "socket floor"
)

// leg is one step of a round.
type leg struct {
	name       string
	viaGateway bool
	viaKafka   bool // the leg goes through the broker at --kafka-addr
	paced      bool // a rate-limited leg, after the round's produce legs (pacedRate)
	run        func(context.Context, *legResult) error
}

// compare runs o.Rounds rounds. Each round creates fresh topics and runs the legs o selects,
// in the order produce gateway, produce direct (replaying that round's franz-go batch sizes),
// consume gateway, consume direct, so each gateway leg is compared with a direct leg measured
// moments later (the Kafka legs after each pair), then the rate-limited legs at a rate taken
// from the round's produce legs. An error means the environment could not be set up; a failed leg is reported
// in its legResult and the other legs still run.
func compare(ctx context.Context, o *Options, progress io.Writer) (*result, error) {
	start := time.Now()
	b, err := newBench(ctx, o, progress)
	if err != nil {
		return nil, err
	}
	res := &result{Options: *o, Iggy: b.describeIggy(), IggyInProcess: b.mem != nil, Gateway: b.describeGateway(), LoadBefore: loadAverage()}
	var legs []leg
	if o.Gateway {
		legs = append(legs, leg{name: legProduceGateway, viaGateway: true, run: b.produceGateway})
	}
	if o.IdempotenceOffLeg {
		legs = append(legs, leg{name: legProduceNoIdem, viaGateway: true, run: b.produceGatewayIdempotenceOff})
	}
	if o.Direct {
		legs = append(legs, leg{name: legProduceDirect, run: b.produceDirect})
	}
	if o.KafkaAddr != "" {
		legs = append(legs, leg{name: legProduceKafka, viaKafka: true, run: b.produceKafka})
	}
	if o.Gateway {
		legs = append(legs, leg{name: legConsumeGateway, viaGateway: true, run: b.consumeGateway})
	}
	if o.Direct {
		legs = append(legs, leg{name: legConsumeDirect, run: b.consumeDirect})
	}
	if o.KafkaAddr != "" {
		legs = append(legs, leg{name: legConsumeKafka, viaKafka: true, run: b.consumeKafka})
	}
	if o.LatencyDuration > 0 {
		if o.Gateway {
			legs = append(legs, leg{name: legLatencyGateway, viaGateway: true, paced: true, run: b.latencyGateway})
		}
		if o.Direct {
			legs = append(legs, leg{name: legLatencyDirect, paced: true, run: b.latencyDirect})
		}
		if o.KafkaAddr != "" {
			legs = append(legs, leg{name: legLatencyKafka, viaKafka: true, paced: true, run: b.latencyKafka})
		}
	}
	if o.RebalanceMembers > 0 {
		if o.Gateway {
			legs = append(legs, leg{name: legRebalanceGateway, viaGateway: true, run: b.rebalanceGateway})
		}
		if o.KafkaAddr != "" {
			legs = append(legs, leg{name: legRebalanceKafka, viaKafka: true, run: b.rebalanceKafka})
		}
	}
	var roundErrs []error
	for i := range o.Rounds {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(progress, "round %d of %d\n", i+1, o.Rounds)
		round, err := b.round(ctx, i+1, alternateIdempotence(legs, i))
		if err != nil {
			roundErrs = append(roundErrs, fmt.Errorf("round %d: %w", i+1, err))
			break
		}
		res.Rounds = append(res.Rounds, round)
	}
	res.LoadAfter = loadAverage()
	res.TeardownErr = errors.Join(append(roundErrs, b.close())...)
	res.Total = time.Since(start)
	return res, nil
}

// alternateIdempotence returns legs with the two gateway produce legs (idempotence on, off)
// swapped in odd rounds (from 0), so that neither always runs first on a warm or cold
// gateway. The direct leg comes after both and replays the idempotent leg's batches.
func alternateIdempotence(legs []leg, round int) []leg {
	if round%2 == 0 || len(legs) < 2 || legs[0].name != legProduceGateway || legs[1].name != legProduceNoIdem {
		return legs
	}
	out := slices.Clone(legs)
	out[0], out[1] = out[1], out[0]
	return out
}

// round runs legs once on fresh topics, then deletes them.
func (b *bench) round(ctx context.Context, n int, legs []leg) ([]*legResult, error) {
	if err := b.createTopics(ctx); err != nil {
		return nil, err
	}
	b.batches, b.paceRate = nil, 0
	var out []*legResult
	for _, l := range legs {
		if ctx.Err() != nil {
			break
		}
		if l.paced && b.paceRate == 0 {
			rate, err := b.pacedRate(out)
			if err != nil {
				r := newLegResult(l.name)
				r.Err = err
				out = append(out, r)
				continue
			}
			b.paceRate = rate
			fmt.Fprintf(b.progress, "  rate-limited legs at %.0f records/s for %s\n", rate, b.o.LatencyDuration)
		}
		r := b.measure(ctx, n, l)
		if l.paced {
			r.PaceRate = b.paceRate
		}
		out = append(out, r)
		if l.name == legProduceGateway && ctx.Err() == nil {
			out = append(out, b.measureFloor(ctx))
		}
	}
	return out, b.deleteTopics()
}

// measureFloor relays as many bytes as a produce leg moves (floor.go), and at least
// minFloorBytes.
func (b *bench) measureFloor(ctx context.Context) *legResult {
	fmt.Fprintf(b.progress, "  %s\n", legSocketFloor)
	r := newLegResult(legSocketFloor)
	f, err := measureSocketFloor(ctx, max(int64(b.o.Records)*int64(b.o.RecordSize), minFloorBytes))
	r.Floor, r.Err, r.Bytes = &f, err, f.Bytes
	return r
}

func (b *bench) describeIggy() string {
	if b.mem != nil {
		return fmt.Sprintf("in-memory server in this process at %s", b.iggyAddr)
	}
	return "Iggy at " + b.iggyAddr
}

func (b *bench) describeGateway() string {
	switch {
	case !b.o.Gateway:
		return "not used (--legs direct)"
	case b.gw != nil && b.prof != nil:
		return fmt.Sprintf("child pid %d at %s, built with the profiling hook, %s", b.gwPID, b.gwAddr, tailCacheOf(b.o.GatewayEnv))
	case b.gw != nil:
		return fmt.Sprintf("child pid %d at %s, %s", b.gwPID, b.gwAddr, tailCacheOf(b.o.GatewayEnv))
	case b.gwPID != 0:
		return fmt.Sprintf("external at %s, pid %d", b.gwAddr, b.gwPID)
	}
	return fmt.Sprintf("external at %s (no --gateway-pid: CPU and RSS not measured)", b.gwAddr)
}

// tailCacheOf describes the tail cache of a gateway started here with env: its default is
// sized from this machine's memory, so a report must say what it was.
func tailCacheOf(env []string) string {
	cfg, err := config.Load(nil, env)
	if err != nil {
		return "tail cache unknown (" + err.Error() + ")"
	}
	if cfg.TailCacheSizedFrom == "" {
		return fmt.Sprintf("tail cache %d MiB (--gateway-env)", cfg.TailCacheBytes>>20)
	}
	return fmt.Sprintf("tail cache %d MiB (%s)", cfg.TailCacheBytes>>20, cfg.TailCacheSizedFrom)
}
