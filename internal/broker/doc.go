// Package broker holds the Kafka API handlers and the state they share (the Broker).
//
// # Layout
//
//	broker.go        Broker, its options, and Lookup (the listener's Dispatcher)
//	routes.go        the handler registry and its helpers
//	errors.go        Iggy error → Kafka error code mapping
//	<api>.go         one file per Kafka API: apiversions.go, metadata.go, ...
//
// Handlers are plain methods over kmsg requests and responses; they never touch sockets. A
// handler gets the per-connection context (listener name, client id and software, principal)
// and returns (response, nil), (nil, nil) for "no response" (Produce with acks=0), or an error
// to close the connection after the response, if any (see internal/listener).
//
// # Adding an API
//
//  1. Add its row (key, accepted versions, notes) to the table in internal/versions and run
//     `go generate ./internal/versions` to refresh docs/PROTOCOL-COVERAGE.md.
//
//  2. Add one file here with the handler method and an init function registering it:
//
//     func init() {
//     register(kmsg.Fetch, route{
//     serve:   typed((*Broker).fetch),
//     invalid: fetchInvalidRequest, // nil when the response has no error field
//     })
//     }
//
// TestEveryListedAPIHasAHandler fails when the table and the registry disagree. Mark a route
// concurrent only when the handler has no effect a later request on the same connection could
// observe (see the ordering rules in internal/listener), and abandonedOnClose only when it does
// nothing but wait on the client's behalf (long-poll Fetch, parked JoinGroup/SyncGroup).
//
// # Without the bridge
//
// When the bridge is off (Broker.iggy is nil), handlers give the storage-free answers of SPEC
// §4.3: nothing may look like data was stored.
package broker
