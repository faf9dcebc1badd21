package authorize

import (
	"testing"
)

func TestSplit(t *testing.T) {
	even := func(i int) bool { return i%2 == 0 }
	kept, refused := split([]int{2, 4}, even)
	if len(kept) != 2 || refused != nil {
		t.Fatalf("all allowed: %v %v", kept, refused)
	}
	kept, refused = split([]int{1, 2, 3, 4}, even)
	if len(kept) != 2 || kept[0] != 2 || kept[1] != 4 || len(refused) != 2 || refused[0] != 1 || refused[1] != 3 {
		t.Fatalf("mixed: %v %v", kept, refused)
	}
}
