package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestSocketFloorRelaysEveryFrame(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f, err := measureSocketFloor(ctx, minFloorBytes+1)
	if err != nil {
		t.Fatal(err)
	}
	if f.Bytes != minFloorBytes+floorFrame || f.Receive < 0 || f.Send < 0 || f.Receive+f.Send == 0 {
		t.Fatalf("floor %+v: want %d bytes relayed at some CPU cost", f, minFloorBytes+floorFrame)
	}
}

// The report divides the gateway's produce CPU per GB by the floor of the same round.
func TestPrintFloorRatio(t *testing.T) {
	round := func(gatewayCPU time.Duration, floor socketFloor) []*legResult {
		return []*legResult{
			{Name: legProduceGateway, Bytes: 1e9, GatewayCPU: gatewayCPU, GatewayMeasured: true},
			{Name: legSocketFloor, Bytes: floor.Bytes, Floor: &floor},
		}
	}
	r := &result{Rounds: [][]*legResult{
		round(900*time.Millisecond, socketFloor{Bytes: 1e9, Receive: 100 * time.Millisecond, Send: 200 * time.Millisecond}),
		round(800*time.Millisecond, socketFloor{Bytes: 2e9, Receive: 200 * time.Millisecond, Send: 600 * time.Millisecond}),
	}}
	var out bytes.Buffer
	printFloor(&out, r)
	for _, want := range []string{"0.35 s/GB, median of rounds [0.30 0.40] (its receive 0.10 and send 0.25", "2.50× the floor of its round, median of rounds [3.00 2.00]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("floor report without %q:\n%s", want, out.String())
		}
	}
}
