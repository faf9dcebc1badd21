package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// The command name holds spaces and a parenthesis; utime 250 and stime 50 ticks.
	line := "1234 (iggy gw (x)) S 1 1234 1234 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 9 0 100 1000 50\n"
	got, err := parseStatCPU([]byte(line))
	if err != nil || got != 3*time.Second {
		t.Fatalf("parseStatCPU = %v, %v; want 3s", got, err)
	}
	for _, bad := range []string{"", "1234 iggy S", "1 (x) S 1 2", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 zz 0 0"} {
		if _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("parseStatCPU(%q) succeeded", bad)
		}
	}
}

func TestOwnProcessFigures(t *testing.T) {
	pid := os.Getpid()
	if _, err := procCPU(pid); err != nil {
		t.Fatal(err)
	}
	if selfCPU() <= 0 {
		t.Fatal("no CPU time for this process")
	}
	if la := loadAverage(); len(strings.Fields(la)) != 3 {
		t.Fatalf("load average %q", la)
	}
}
