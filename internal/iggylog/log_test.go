package iggylog

import (
	"reflect"
	"testing"
)

// TestMem: Mem keeps the Log contract the stores rely on (contiguous offsets from 0, bounded
// reads from an offset, End one past the last), and Clone is independent of the original.
func TestMem(t *testing.T) {
	ctx := t.Context()
	m := NewMem(2)
	for _, step := range []struct {
		records   []string
		wantFirst uint64
	}{{[]string{"a", "b"}, 0}, {[]string{"c"}, 2}} {
		var recs [][]byte
		for _, r := range step.records {
			recs = append(recs, []byte(r))
		}
		if first, err := m.Append(ctx, 1, recs); err != nil || first != step.wantFirst {
			t.Fatalf("Append(%q) = %d, %v; want %d", step.records, first, err, step.wantFirst)
		}
	}
	for _, tc := range []struct {
		offset uint64
		max    int
		want   []Entry
	}{
		{0, 10, []Entry{{0, []byte("a")}, {1, []byte("b")}, {2, []byte("c")}}},
		{1, 1, []Entry{{1, []byte("b")}}},
		{3, 10, nil},
	} {
		got, err := m.ReadFrom(ctx, 1, tc.offset, tc.max)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ReadFrom(%d, %d) = %v, %v; want %v", tc.offset, tc.max, got, err, tc.want)
		}
	}
	if end, err := m.End(ctx, 1); err != nil || end != 3 {
		t.Fatalf("End = %d, %v; want 3", end, err)
	}
	if end, err := m.End(ctx, 0); err != nil || end != 0 {
		t.Fatalf("End of an empty partition = %d, %v; want 0", end, err)
	}
	if _, err := m.Append(ctx, 2, [][]byte{{1}}); err == nil {
		t.Fatal("Append to partition 2 of 2 succeeded")
	}

	c := m.Clone()
	m.Records(1)[0][0] = 'x'
	m.SetRecords(1, m.Records(1)[:1])
	if got, _ := c.ReadFrom(ctx, 1, 0, 10); len(got) != 3 || string(got[0].Data) != "a" {
		t.Fatalf("the clone changed with the original: %v", got)
	}
	if got, _ := m.ReadFrom(ctx, 1, 0, 10); len(got) != 1 || string(got[0].Data) != "x" {
		t.Fatalf("Records/SetRecords did not change the log: %v", got)
	}
}
