package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Rec is a record as a client reports it, in the JSON the client scripts print.
type Rec struct {
	Partition int32       `json:"partition"`
	Offset    int64       `json:"offset"`
	Key       *string     `json:"key"`   // nil: null key
	Value     *string     `json:"value"` // nil: null value
	Headers   [][2]string `json:"headers"`
	Timestamp int64       `json:"timestamp"` // ms since the epoch
}

func (r Rec) String() string {
	return fmt.Sprintf("{p%d@%d key=%s value=%s headers=%v ts=%d}", r.Partition, r.Offset, strp(r.Key), strp(r.Value), r.Headers, r.Timestamp)
}

func strp(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}

func ptr(s string) *string { return &s }

// sampleRecords is the data set most produce/consume scenarios send to partition 0: keys,
// a null key, several headers in order, a repeated header name, and text values.
func sampleRecords() []Rec {
	return []Rec{
		{Key: ptr("k0"), Value: ptr("v0"), Headers: [][2]string{{"h1", "a"}, {"h2", "b"}}},
		{Key: nil, Value: ptr("value without key")},
		{Key: ptr("k2"), Value: ptr("v2 with spaces"), Headers: [][2]string{{"trace", "x1"}, {"trace", "x2"}}},
	}
}

// timeWindow is the interval a record's timestamp must fall in when the client stamped it
// with its own clock. The slack allows for clock granularity only.
type timeWindow struct{ from, to int64 }

func windowAround(start time.Time) timeWindow {
	return timeWindow{from: start.Add(-time.Second).UnixMilli(), to: time.Now().Add(time.Second).UnixMilli()}
}

// checkRecords compares what a client read with what was written: same count, and for each
// record in order the partition, offset (firstOffset+i), key, value and headers. Timestamps
// must equal want[i].Timestamp when it is set, else fall in win.
func checkRecords(t testing.TB, got, want []Rec, firstOffset int64, win timeWindow) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d\ngot:  %v\nwant: %v", len(got), len(want), got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		var errs []string
		if g.Partition != w.Partition {
			errs = append(errs, fmt.Sprintf("partition %d, want %d", g.Partition, w.Partition))
		}
		if g.Offset != firstOffset+int64(i) {
			errs = append(errs, fmt.Sprintf("offset %d, want %d", g.Offset, firstOffset+int64(i)))
		}
		if strp(g.Key) != strp(w.Key) {
			errs = append(errs, fmt.Sprintf("key %s, want %s", strp(g.Key), strp(w.Key)))
		}
		if strp(g.Value) != strp(w.Value) {
			errs = append(errs, fmt.Sprintf("value %s, want %s", strp(g.Value), strp(w.Value)))
		}
		if fmt.Sprint(normHeaders(g.Headers)) != fmt.Sprint(normHeaders(w.Headers)) {
			errs = append(errs, fmt.Sprintf("headers %v, want %v", g.Headers, w.Headers))
		}
		switch {
		case w.Timestamp != 0 && g.Timestamp != w.Timestamp:
			errs = append(errs, fmt.Sprintf("timestamp %d, want %d", g.Timestamp, w.Timestamp))
		case w.Timestamp == 0 && (g.Timestamp < win.from || g.Timestamp > win.to):
			errs = append(errs, fmt.Sprintf("timestamp %d outside the produce window [%d, %d]", g.Timestamp, win.from, win.to))
		}
		if len(errs) > 0 {
			t.Errorf("record %d: %s\ngot:  %v\nwant: %v", i, strings.Join(errs, "; "), g, w)
		}
	}
}

func normHeaders(h [][2]string) [][2]string {
	if len(h) == 0 {
		return nil
	}
	return h
}
