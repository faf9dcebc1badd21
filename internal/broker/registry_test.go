package broker

import (
	"maps"
	"slices"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/authorize"
	"github.com/iggygw/iggy-gateway-kafka/internal/versions"
	"github.com/twmb/franz-go/pkg/kmsg"
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

// TestEveryRouteHasAuthorizationRule: a new API key must say what an identified user needs
// (internal/authorize).
func TestEveryRouteHasAuthorizationRule(t *testing.T) {
	for key := range routes {
		if !authorize.Covers(key) {
			t.Errorf("%s has no authorization rule (internal/authorize)", kmsg.NameForKey(key))
		}
	}
}
