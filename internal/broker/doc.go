// Package broker holds the Kafka API handlers and the state they share (the Broker): request
// decoding, authorization, topic administration and configs, groups and offsets. The data
// path (Produce, Fetch, ListOffsets, OffsetForLeaderEpoch, DeleteRecords) is
// internal/dataplane; its handlers here are thin adapters.
//
// # Layout
//
//	broker.go        Broker, its options, and Lookup (the listener's Dispatcher)
//	routes.go        the handler registry and its helpers
//	storage.go       Storage, what the handlers need of Iggy, and the storage(cc) accessor
//	errors.go        topic administration errors as Kafka answers them (internal/kafkacode
//	                 maps every other Iggy error)
//	<api>.go         one file per Kafka API: apiversions.go, metadata.go, ...
//
// # Seams
//
// Each of these is the one place where its concern is decided:
//
//   - Storage: every Iggy call of a handler goes through b.storage(cc), the Storage for the
//     requesting connection (nil cc: the gateway's own reads); Options.Iggy, shared by every
//     connection.
//   - Authorization (internal/authorize, Broker.authorized): the rule of each API key narrows an identified user's
//     request to what its Iggy permissions allow before the handler runs.
//   - Placement (internal/placement, Options.Placement): who leads each partition,
//     coordinates each group and is the controller, as Metadata, FindCoordinator and
//     DescribeCluster report it: placement.Single when this gateway does everything,
//     placement.Cluster for several gateways in front of one Iggy (docs/DEPLOYMENT.md);
//     ownership.go gates the requests only the owner may serve.
//   - The data plane (internal/dataplane, Broker.Data): partition state, the write and read
//     paths, idempotence, leader epochs and truncation, built by New from the same options.
//
// Handlers are plain methods over kmsg requests and responses; they never touch sockets. A
// handler gets the per-connection context (listener name, client id and software, principal)
// and returns (response, nil), (nil, nil) for "no response" (Produce with acks=0), or an error
// to close the connection after the response, if any (see internal/listener).
//
// # Adding an API
//
// First add its row (key, accepted versions, notes) to the table in internal/versions and run
// `go generate ./internal/versions` to refresh docs/PROTOCOL-COVERAGE.md. Then add one file
// here with the handler method and an init function registering it:
//
//	func init() {
//		register(kmsg.DescribeGroups, route{
//			serve:   typed((*Broker).describeGroups),
//			invalid: describeGroupsInvalidRequest, // nil when the response has no error field
//		})
//	}
//
// TestEveryListedAPIHasAHandler fails when the table and the registry disagree. Mark a route
// concurrent only when the handler has no effect a later request on the same connection could
// observe (see the ordering rules in internal/listener), and abandonedOnClose only when it does
// nothing but wait on the client's behalf (long-poll Fetch, parked JoinGroup/SyncGroup).
//
// # Without the bridge
//
// When the bridge is off (Options.Iggy is nil), handlers give the storage-free answers
// (docs/CONFIGURATION.md, "Bridge to Iggy"): nothing may look like data was stored.
package broker
