package main

import (
	"errors"
	"flag"
	"io"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	o, err := parseOptions([]string{"--records", "10", "--codec", "lz4", "--acks", "1", "--legs", "direct",
		"--linger", "5ms", "--gateway-env", "IGGY_KAFKA_LOG_LEVEL=debug"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Records != 10 || o.Codec != "lz4" || o.Acks != "1" || o.Gateway || !o.Direct || o.Linger != 5*time.Millisecond ||
		len(o.GatewayEnv) != 1 {
		t.Fatalf("options %+v", o)
	}
	if _, err := parseOptions([]string{"--help"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	for _, bad := range [][]string{
		{"--records", "0"}, {"--record-size", "11"}, {"--codec", "brotli"}, {"--acks", "2"},
		{"--partitions", "0"}, {"--producers", "0"}, {"--legs", "kafka"}, {"--gateway-env", "LOG_LEVEL=debug"},
		{"--gateway-pid", "7"}, {"--iggy-pid", "7"}, {"--gateway-addr", "127.0.0.1:9093", "--profile-dir", "/tmp/p"}, {"extra"},
		{"--idempotence-off-leg", "--acks", "1"}, {"--idempotence-off-leg", "--legs", "direct"},
	} {
		if _, err := parseOptions(bad, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("parseOptions(%q) = %v, want a usage error", bad, err)
		}
	}
}
