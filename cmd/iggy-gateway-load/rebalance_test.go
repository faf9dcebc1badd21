package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestRebalanceLegRuns runs the rebalance leg with a small group against the gateway on the
// in-memory Iggy server, and checks that every change reached a stable group and the group
// processed every produced record.
func TestRebalanceLegRuns(t *testing.T) {
	needGateway(t)
	o := tinyOptions()
	o.Direct, o.RebalanceMembers, o.Partitions = false, 3, 4
	// No initial delay: the leg measures the protocol, not the configured wait.
	o.GatewayEnv = []string{"IGGY_KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS=0"}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var progress bytes.Buffer
	b, err := newBench(ctx, o, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	round, err := b.round(ctx, 1, []leg{{name: legRebalanceGateway, viaGateway: true, run: b.rebalanceGateway}})
	if cerr := b.close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	l := round[0]
	if l.Err != nil {
		t.Fatalf("rebalance leg: %v\n%s", l.Err, progress.String())
	}
	rep := l.Rebalance
	if len(rep.Phases) != 3 || rep.Produced == 0 || rep.Processed-rep.Doubles != rep.Produced {
		t.Fatalf("report %+v: want 3 changes and every produced record processed", rep)
	}
	for _, p := range rep.Phases {
		if p.ToStable <= 0 {
			t.Fatalf("change %s has no time to stable", p.Name)
		}
	}
	var out bytes.Buffer
	printRebalance(&out, &result{Options: *o, Rounds: [][]*legResult{round}})
	if !strings.Contains(out.String(), "rebalance gateway (3 members") {
		t.Fatalf("report:\n%s", out.String())
	}
	t.Logf("\n%s", out.String())
}
