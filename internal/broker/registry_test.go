package broker

import (
	"maps"
	"slices"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/versions"
)

// The version table and the handler registry must list the same keys: a listed key without a
// handler would be advertised but close connections, a handler without a row is unreachable.
func TestEveryListedAPIHasAHandler(t *testing.T) {
	var listed []int16
	for _, a := range versions.All() {
		listed = append(listed, a.Key)
	}
	registered := slices.Sorted(maps.Keys(routes))
	if !slices.Equal(listed, registered) {
		t.Fatalf("versions table lists keys %v, handlers are registered for %v", listed, registered)
	}
}
