package config

import (
	"slices"
	"strings"
	"testing"
)

func TestBrokersAndNodeID(t *testing.T) {
	c, err := load(t, nil, "IGGY_KAFKA_BROKERS=1@gw1:9093, 2@gw2:9093,3@10.0.0.3:9094", "IGGY_KAFKA_NODE_ID=2",
		"IGGY_KAFKA_BIND_ADDR=0.0.0.0:9093", "IGGY_KAFKA_ADVERTISED_HOST=gw2", "IGGY_KAFKA_COORDINATOR_LOG_ENABLED=false")
	if err != nil {
		t.Fatal(err)
	}
	want := []Peer{{1, "gw1", 9093}, {2, "gw2", 9093}, {3, "10.0.0.3", 9094}}
	if !slices.Equal(c.Peers, want) || c.NodeID != 2 || c.CoordinatorLog != "false" {
		t.Errorf("peers %v node %d coordinator log %q", c.Peers, c.NodeID, c.CoordinatorLog)
	}
	if c, err := load(t, nil); err != nil || c.Peers != nil {
		t.Errorf("without BROKERS: peers %v, err %v", c.Peers, err)
	}
}

func TestBrokersMistakesAreNamed(t *testing.T) {
	self := []string{"IGGY_KAFKA_BIND_ADDR=127.0.0.1:9093", "IGGY_KAFKA_NODE_ID=1"}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"IGGY_KAFKA_BROKERS=1@127.0.0.1:9093,gw2:9093"}, `entry "gw2:9093": expected id@host:port`},
		{[]string{"IGGY_KAFKA_BROKERS=1@127.0.0.1:9093,x@gw2:9093"}, `entry "x@gw2:9093": the id must be a number`},
		{[]string{"IGGY_KAFKA_BROKERS=1@127.0.0.1:9093,2@0.0.0.0:9093"}, `entry "2@0.0.0.0:9093": expected id@host:port with the host and port`},
		{[]string{"IGGY_KAFKA_BROKERS=1@127.0.0.1:9093,1@gw2:9093"}, "node id 1 is listed twice"},
		{[]string{"IGGY_KAFKA_BROKERS=1@127.0.0.1:9093,2@127.0.0.1:9093"}, "nodes 1 and 2 both have the address 127.0.0.1:9093"},
		{[]string{"IGGY_KAFKA_BROKERS=2@gw2:9093,3@gw3:9093"}, "NODE_ID=1 is not in IGGY_KAFKA_BROKERS"},
		{[]string{"IGGY_KAFKA_BROKERS=1@gw1:9093,2@gw2:9093"}, "lists node 1 at gw1:9093, but this gateway advertises 127.0.0.1:9093"},
	} {
		env := append(slices.Clone(self), tc.env...)
		_, err := load(t, nil, env...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want it to contain %q", env, err, tc.want)
		}
	}
	// The default NODE_ID is never taken for an entry of BROKERS.
	_, err := load(t, nil, "IGGY_KAFKA_BIND_ADDR=127.0.0.1:9093", "IGGY_KAFKA_BROKERS=1@127.0.0.1:9093")
	if err == nil || !strings.Contains(err.Error(), "set IGGY_KAFKA_NODE_ID to this gateway's id") {
		t.Errorf("BROKERS without NODE_ID: err = %v", err)
	}
}

func TestBrokersWithAdvertisedListeners(t *testing.T) {
	_, err := load(t, nil, "IGGY_KAFKA_BROKERS=1@gw1:9093", "IGGY_KAFKA_NODE_ID=1",
		"IGGY_KAFKA_LISTENERS=PLAINTEXT://0.0.0.0:9093", "IGGY_KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://gw1:9093")
	if err != nil {
		t.Fatalf("one listener: %v", err)
	}
}
