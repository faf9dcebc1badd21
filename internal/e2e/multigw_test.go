package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// Several gateways over one Iggy (docs/DEPLOYMENT.md): three gateway processes on distinct
// loopback ports, each with the same BROKERS list and its own NODE_ID, clients bootstrapped
// with all three. One is killed with SIGKILL while an idempotent producer writes and a group
// of three members consumes, then started again.

// Takeover bounds asserted (generously: the machine is shared and the gateways run with the
// race detector). docs/DEPLOYMENT.md documents about 1 s for partitions and 4 s for groups.
const (
	partitionTakeoverBound = 10 * time.Second
	groupTakeoverBound     = 15 * time.Second
)

// TestSeveralGatewaysSIGKILL: kafka-topics --create sent to a gateway that is not the
// controller creates the topic (the Java admin client follows the controller); an idempotent
// franz-go producer (acks=all) and a three-member franz-go group work through all three
// gateways; the group's coordinator, which also leads partitions, is killed with SIGKILL.
// The survivors stop listing it and take its partitions over within the partition bound and
// its group within the group bound; the producer carries on after a metadata refresh; the
// group rebalances and resumes from its committed offsets; committed offsets never pass the
// log end nor go back. Started again, the killed gateway is listed again and leads the same
// partitions as before. In the end every acknowledged record is stored exactly once, in order,
// and was given to the group.
func TestSeveralGatewaysSIGKILL(t *testing.T) {
	c := startGatewayCluster(t, 3)
	ctx := ctxFor(t, 3*time.Minute)
	waitFor(t, 20*time.Second, "every gateway listing three brokers", func() bool {
		for _, a := range c.addrs {
			md, err := gatewayMetadata(a)
			if err != nil || len(md.Brokers) != 3 {
				return false
			}
		}
		return true
	})
	md, err := gatewayMetadata(c.addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	controller := md.ControllerID
	topic := c.createTopicAvoiding(t, controller, 12)

	group := "g-" + topic
	w := startClusterWork(t, ctx, c.env, topic, group, 3)
	log, got := w.log, w.got

	waitFor(t, 60*time.Second, "500 acknowledgements and 300 records consumed", func() bool {
		n, _ := got.count()
		return log.acks() >= 500 && n >= 300
	})
	victim, err := groupCoordinator(c.addrs[0], group)
	if err != nil {
		t.Fatal(err)
	}
	md, err = gatewayMetadata(c.addrs[0], topic)
	if err != nil {
		t.Fatal(err)
	}
	ledBefore := ledBy(leaders(md, topic), victim)
	if len(ledBefore) == 0 {
		t.Fatalf("the group's coordinator, node %d, leads no partition of %s: %v", victim, topic, leaders(md, topic))
	}

	acksAtKill := log.acks()
	got.mark(w.watch.committed())
	killedAt := c.kill(t, c.index(victim))
	partitions, groups := c.measureTakeover(t, victim, group, killedAt)
	t.Logf("SIGKILL of node %d (the coordinator of %s, controller %v, leader of partitions %v): the survivors stop listing it and lead its partitions after %s, serve its group after %s",
		victim, group, victim == controller, ledBefore, partitions.Round(time.Millisecond), groups.Round(time.Millisecond))
	if partitions > partitionTakeoverBound {
		t.Errorf("partition takeover took %s, more than %s", partitions, partitionTakeoverBound)
	}
	if groups > groupTakeoverBound {
		t.Errorf("group takeover took %s, more than %s", groups, groupTakeoverBound)
	}
	consumedAtKill, _ := got.count()
	waitFor(t, 60*time.Second, "300 more acknowledgements and 300 more records consumed after the kill", func() bool {
		n, _ := got.count()
		return log.acks() >= acksAtKill+300 && n >= consumedAtKill+300
	})

	restartedAt := time.Now()
	c.start(t, c.index(victim))
	waitFor(t, 30*time.Second, "the restarted gateway listed and leading its partitions again", func() bool {
		for _, a := range c.addrs {
			md, err := gatewayMetadata(a, topic)
			if err != nil || len(md.Brokers) != 3 || !slices.Equal(ledBy(leaders(md, topic), victim), ledBefore) {
				return false
			}
		}
		return true
	})
	t.Logf("node %d restarted: listed by every gateway and leading partitions %v again after %s", victim, ledBefore, time.Since(restartedAt).Round(time.Millisecond))
	acksAtRestart := log.acks()
	waitFor(t, 60*time.Second, "300 more acknowledgements after the restart", func() bool { return log.acks() >= acksAtRestart+300 })

	samples := w.finish(t, ctx, 60*time.Second)
	if behind := got.resumedBehind(); len(behind) > 0 {
		t.Errorf("%d records given to the group again below the offsets committed before the kill, e.g. %v", len(behind), behind[:min(5, len(behind))])
	}
	distinct, repeats := got.count()
	t.Logf("%d records acknowledged (%d before the kill), stored once each, in order; the group was given %d (%d again: polled while the coordinator moved, so not committed); %d samples of the committed offsets, none beyond the end or going back",
		log.acks(), acksAtKill, distinct, repeats, samples)
}

// createTopicAvoiding creates a topic with kafka-topics --create sent to a gateway other than
// the controller, and waits until every gateway lists it with its partitions.
func (c *gatewayCluster) createTopicAvoiding(t *testing.T, controller int32, partitions int) string {
	t.Helper()
	if _, missing := javaFamily.Detect(); missing != "" {
		if required() {
			t.Fatalf("java: %s", missing)
		}
		t.Logf("java: %s; the topic is created natively instead", missing)
		return c.env.CreateTopic(t, partitions)
	}
	other := c.addrs[(c.index(controller)+1)%len(c.addrs)]
	topic := TopicName(t)
	kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", other, "--create", "--topic", topic,
		"--partitions", strconv.Itoa(partitions), "--replication-factor", "1")
	waitFor(t, 20*time.Second, fmt.Sprintf("every gateway listing %s with %d partitions", topic, partitions), func() bool {
		for _, a := range c.addrs {
			md, err := gatewayMetadata(a, topic)
			if err != nil || len(leaders(md, topic)) != partitions {
				return false
			}
		}
		return true
	})
	t.Logf("kafka-topics --create sent to %s created %s (the controller is node %d at %s)", other, topic, controller, c.addrs[c.index(controller)])
	return topic
}

// measureTakeover polls the survivors every 20 ms after node victim was killed at killedAt
// until none lists it and the coordinator they name for group serves it (docs/DEPLOYMENT.md,
// takeover timing). It returns how long after the kill the partitions (Metadata without the
// victim: its partitions are led by survivors) and the group were taken over.
func (c *gatewayCluster) measureTakeover(t *testing.T, victim int32, group string, killedAt time.Time) (partitions, groups time.Duration) {
	t.Helper()
	var survivors []string
	for i, a := range c.addrs {
		if c.nodeID(i) != victim {
			survivors = append(survivors, a)
		}
	}
	deadline := killedAt.Add(60 * time.Second)
	for partitions == 0 || groups == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no takeover within 60 s of the kill (partitions after %s, group after %s)", partitions, groups)
		}
		if partitions == 0 && !anyLists(survivors, victim) {
			partitions = time.Since(killedAt)
		}
		if groups == 0 {
			coord, err := groupCoordinator(survivors[0], group)
			if err == nil && coord != victim && servesGroup(c.addrs[c.index(coord)], group) {
				groups = time.Since(killedAt)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return partitions, groups
}

// anyLists reports whether a gateway of addrs lists node among its brokers (or cannot be
// asked).
func anyLists(addrs []string, node int32) bool {
	for _, a := range addrs {
		md, err := gatewayMetadata(a)
		if err != nil || slices.Contains(brokerIDs(md), node) {
			return true
		}
	}
	return false
}

// TestSeveralGatewaysRandomKills kills (SIGKILL) and restarts gateways of three at random,
// seeded, while an idempotent producer and a two-member group work; then it restarts every
// gateway and checks that every acknowledged record is stored exactly once, in order, and
// was given to the group, and that the committed offsets sampled throughout never passed the
// log end nor went back. IGGYGW_E2E_CHAOS_SEED repeats a run (its seed is logged);
// IGGYGW_E2E_CHAOS_DURATION (a Go duration, default 30s) runs longer.
func TestSeveralGatewaysRandomKills(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("IGGYGW_E2E_CHAOS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatalf("IGGYGW_E2E_CHAOS_SEED=%s: %v", s, err)
		}
	}
	duration := 30 * time.Second
	if s := os.Getenv("IGGYGW_E2E_CHAOS_DURATION"); s != "" {
		var err error
		if duration, err = time.ParseDuration(s); err != nil {
			t.Fatalf("IGGYGW_E2E_CHAOS_DURATION=%s: %v", s, err)
		}
	}
	t.Logf("seed %d (IGGYGW_E2E_CHAOS_SEED), %s of kills and restarts", seed, duration)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))

	c := startGatewayCluster(t, 3)
	ctx := ctxFor(t, duration+3*time.Minute)
	topic := c.env.CreateTopic(t, 6)
	w := startClusterWork(t, ctx, c.env, topic, "g-"+topic, 2)
	log, got := w.log, w.got
	waitFor(t, 60*time.Second, "the first acknowledgements and records consumed", func() bool {
		n, _ := got.count()
		return log.acks() >= 200 && n >= 100
	})

	var actions []string
	for end := time.Now().Add(duration); time.Now().Before(end); {
		time.Sleep(time.Duration(1500+rng.IntN(3500)) * time.Millisecond)
		var up, down []int
		for i := range c.nodes {
			if c.running(i) {
				up = append(up, i)
			} else {
				down = append(down, i)
			}
		}
		if len(down) > 0 && (len(up) == 1 || rng.IntN(2) == 0) {
			i := down[rng.IntN(len(down))]
			c.start(t, i)
			actions = append(actions, fmt.Sprintf("start %d", c.nodeID(i)))
		} else {
			i := up[rng.IntN(len(up))]
			c.kill(t, i)
			actions = append(actions, fmt.Sprintf("kill %d", c.nodeID(i)))
		}
	}
	for i := range c.nodes {
		if !c.running(i) {
			c.start(t, i)
			actions = append(actions, fmt.Sprintf("start %d", c.nodeID(i)))
		}
	}
	t.Logf("actions: %v", actions)
	acksAtEnd := log.acks()
	waitFor(t, 60*time.Second, "300 more acknowledgements with every gateway up", func() bool { return log.acks() >= acksAtEnd+300 })
	samples := w.finish(t, ctx, 90*time.Second)
	distinct, repeats := got.count()
	t.Logf("%d records acknowledged, stored once each, in order; the group was given %d (%d again); %d samples of the committed offsets, none beyond the end or going back",
		log.acks(), distinct, repeats, samples)
}
