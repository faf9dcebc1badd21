package versions

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

//go:generate go test -run TestCoverageDocIsCurrent -update .

var update = flag.Bool("update", false, "rewrite docs/PROTOCOL-COVERAGE.md from the table")

func TestTableIsWellFormed(t *testing.T) {
	if !slices.IsSortedFunc(table, func(a, b API) int { return int(a.Key) - int(b.Key) }) {
		t.Fatal("table is not sorted by key")
	}
	for i, a := range table {
		if i > 0 && table[i-1].Key == a.Key {
			t.Errorf("key %d listed twice", a.Key)
		}
		req := kmsg.RequestForKey(a.Key)
		if req == nil {
			t.Errorf("key %d unknown to kmsg", a.Key)
			continue
		}
		if !strings.EqualFold(a.Name, kmsg.NameForKey(a.Key)) {
			t.Errorf("key %d named %q, kmsg says %q", a.Key, a.Name, kmsg.NameForKey(a.Key))
		}
		if a.Min < 0 || a.Min > a.Max || a.Max > req.MaxVersion() {
			t.Errorf("%s: range %d–%d invalid (kmsg max %d)", a.Name, a.Min, a.Max, req.MaxVersion())
		}
	}
}

// Keys never advertised: inter-broker (WriteTxnMarkers, 27, among them: the gateway writes its
// transaction markers itself, docs/TRANSACTIONS.md) and KRaft. CreateAcls and DeleteAcls (30,
// 31) are listed although they change nothing: unlisted, Kafka's tools fail with an
// UnsupportedVersion error instead of the gateway's "permissions live in Iggy".
func TestForbiddenKeysAreNeverListed(t *testing.T) {
	forbidden := []int16{4, 5, 6, 7, 27, 52, 53, 54, 55, 56, 57, 58, 62, 63, 64, 67}
	for _, k := range forbidden {
		if _, ok := Lookup(k); ok {
			t.Errorf("key %d (%s) must never be listed", k, kmsg.NameForKey(k))
		}
	}
}

func TestLookupAndAccepts(t *testing.T) {
	for _, a := range table {
		got, ok := Lookup(a.Key)
		if !ok || got.Key != a.Key {
			t.Fatalf("Lookup(%d) = %v, %v", a.Key, got, ok)
		}
		tests := []struct {
			v    int16
			want bool
		}{{a.Min - 1, false}, {a.Min, true}, {a.Max, true}, {a.Max + 1, false}}
		for _, tt := range tests {
			if got := Accepts(a.Key, tt.v, true); got != tt.want {
				t.Errorf("Accepts(%s v%d) = %v, want %v", a.Name, tt.v, got, tt.want)
			}
			if got := Accepts(a.Key, tt.v, false); got != (tt.want && !a.SASLOnly) {
				t.Errorf("Accepts(%s v%d, no SASL) = %v", a.Name, tt.v, got)
			}
		}
	}
	if _, ok := Lookup(-1); ok {
		t.Error("Lookup(-1) found an entry")
	}
	if Accepts(999, 0, true) {
		t.Error("unknown key accepted")
	}
}

func TestAdvertised(t *testing.T) {
	for _, sasl := range []bool{false, true} {
		adv := Advertised(sasl)
		var want []int16
		for _, a := range table {
			if !a.SASLOnly || sasl {
				want = append(want, a.Key)
			}
		}
		var got []int16
		for _, k := range adv {
			got = append(got, k.ApiKey)
			a, _ := Lookup(k.ApiKey)
			if k.MaxVersion != a.Max || k.MinVersion > a.Min {
				t.Errorf("%s advertised %d–%d, accepted %d–%d", a.Name, k.MinVersion, k.MaxVersion, a.Min, a.Max)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("sasl=%v: advertised keys %v, want %v", sasl, got, want)
		}
	}
}

func TestAdvertisedMin(t *testing.T) {
	a := API{Key: 0, Name: "Produce", Min: 3, Max: 9, AdvertiseFromV0: true}
	if a.advertisedMin() != 0 {
		t.Errorf("Produce advertised min = %d, want 0 (KAFKA-18659)", a.advertisedMin())
	}
	b := API{Min: 2, Max: 4}
	if b.advertisedMin() != 2 {
		t.Errorf("advertised min = %d, want Min", b.advertisedMin())
	}
}

// The coverage table in the docs is generated from the table; a stale doc fails here.
// Regenerate with `go generate ./internal/versions`.
func TestCoverageDocIsCurrent(t *testing.T) {
	testutil.GeneratedSection{
		Path:       "../../docs/PROTOCOL-COVERAGE.md",
		Begin:      CoverageBegin,
		End:        CoverageEnd,
		Body:       CoverageMarkdown(),
		Regenerate: "go generate ./internal/versions",
	}.Check(t, *update)
}
