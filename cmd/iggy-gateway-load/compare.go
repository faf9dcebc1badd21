package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

// result is one comparison run.
type result struct {
	Options     Options
	Iggy        string // what Iggy server was used
	Gateway     string // what gateway was used
	LoadBefore  string // load averages before and after the legs
	LoadAfter   string
	Legs        []*legResult
	Total       time.Duration
	TeardownErr error
}

// ok reports whether every leg ran without error and every record verified.
func (r *result) ok() bool {
	for _, l := range r.Legs {
		if l.Err != nil {
			return false
		}
	}
	return r.TeardownErr == nil && len(r.Legs) > 0
}

// leg returns the leg called name, nil if it did not run.
func (r *result) leg(name string) *legResult {
	for _, l := range r.Legs {
		if l.Name == name {
			return l
		}
	}
	return nil
}

// Leg names.
const (
	legProduceGateway = "produce gateway"
	legProduceDirect  = "produce direct"
	legConsumeGateway = "consume gateway"
	legConsumeDirect  = "consume direct"
)

// compare runs the legs o selects, in the order produce gateway, produce direct (replaying
// the gateway leg's batch sizes), consume gateway, consume direct, and returns their
// measurements. An error means the environment could not be set up; a failed leg is
// reported in its legResult and the other legs still run.
func compare(ctx context.Context, o *Options, progress io.Writer) (*result, error) {
	start := time.Now()
	b, err := newBench(ctx, o, progress)
	if err != nil {
		return nil, err
	}
	res := &result{Options: *o, Iggy: b.describeIggy(), Gateway: b.describeGateway(), LoadBefore: loadAverage()}
	type leg struct {
		name       string
		viaGateway bool
		run        func(context.Context, *legResult) error
	}
	var legs []leg
	if o.Gateway {
		legs = append(legs, leg{legProduceGateway, true, b.produceGateway})
	}
	if o.Direct {
		legs = append(legs, leg{legProduceDirect, false, b.produceDirect})
	}
	if o.Gateway {
		legs = append(legs, leg{legConsumeGateway, true, b.consumeGateway})
	}
	if o.Direct {
		legs = append(legs, leg{legConsumeDirect, false, b.consumeDirect})
	}
	for _, l := range legs {
		if ctx.Err() != nil {
			break
		}
		res.Legs = append(res.Legs, b.measure(ctx, l.name, l.viaGateway, l.run))
	}
	res.LoadAfter = loadAverage()
	res.TeardownErr = b.close()
	res.Total = time.Since(start)
	return res, nil
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
		return fmt.Sprintf("child pid %d at %s, built with the profiling hook", b.gwPID, b.gwAddr)
	case b.gw != nil:
		return fmt.Sprintf("child pid %d at %s", b.gwPID, b.gwAddr)
	case b.gwPID != 0:
		return fmt.Sprintf("external at %s, pid %d", b.gwAddr, b.gwPID)
	}
	return fmt.Sprintf("external at %s (no --gateway-pid: CPU and RSS not measured)", b.gwAddr)
}
