// Package e2e runs real Kafka clients against the compiled gateway and checks the data they
// get back (keys, values, headers, timestamps, offsets), not just their exit codes.
//
// One harness serves every client family: it builds cmd/iggy-gateway-kafka once, starts the
// in-memory Iggy server in-process (or uses IGGY_TEST_ADDR, IGGY_TEST_USERNAME,
// IGGY_TEST_PASSWORD), starts the gateway on a free loopback port, waits for an ApiVersions
// round trip and shares that gateway across scenarios. Gateway output is captured and printed
// for any scenario that fails.
//
// Client families and what they need on the machine (scripts/install-test-deps.sh installs
// all of it):
//
//	java      e2e/bin/kafka-*.sh wrappers over e2e/java/lib (Kafka tools from Maven Central), java
//	kcat      kcat in PATH (Debian package)
//	python    confluent-kafka in the virtualenv .cache/venv
//	kafka-python  kafka-python (and its codec libraries) in the same virtualenv
//	kafkajs   e2e/node/node_modules (npm ci), node
//	franz-go, sarama, kafka-go: Go modules, always available
//
// The package is a Go module of its own (go.mod here, with the gateway's module replaced by
// this checkout) so that sarama and kafka-go stay out of the gateway's go.mod; run it with
// `go -C internal/e2e test ./...` from the repository root (`make test` does).
//
// Frameworks (the frameworks table of the report):
//
//	kafka-streams  e2e/streams/lib (Maven Central), java
//	kafka-connect, mirrormaker2  e2e/connect/lib (Maven Central, the 4.3.1 set), java
//	aiokafka, quixstreams  the virtualenv .cache/venv-frameworks
//
// Environment:
//
//	IGGYGW_E2E_REQUIRED=1     a missing client fails its test instead of skipping it (CI).
//	IGGYGW_E2E_RESULTS=FILE   write every scenario's outcome as JSON (read by cmd/compat-report).
//	IGGYGW_E2E_RUN_PENDING=1  also run scenarios whose gateway feature is listed as pending.
//	IGGYGW_E2E_BOOTSTRAP=H:P  run the scenarios against an already running Kafka-protocol
//	                          endpoint instead of starting the gateway (used to check that a
//	                          scenario's expectations hold against Apache Kafka itself).
//	IGGYGW_E2E_CHAOS_SEED=N   the seed of TestSeveralGatewaysRandomKills (each run logs its own).
//	IGGYGW_E2E_CHAOS_DURATION=D  how long that test kills and restarts gateways (default 30s).
//
// Scenarios with several gateways (multigw_test.go) start three gateway processes of their
// own (gatewayCluster in cluster.go) over an Iggy backend of their own.
//
// Scenarios behind an Iggy cluster (iggycluster_test.go) start a gateway of their own given the
// three nodes of the in-memory Iggy cluster, or of the real cluster IGGY_TEST_CLUSTER_ADDRS
// names (with IGGY_TEST_CLUSTER_KILL_COMMAND and IGGY_TEST_CLUSTER_RESTART_COMMAND for the
// failover scenarios, as package internal/iggy/clustertest describes), a backup listed first.
// They run scenarios of every family's own list and report them apart (Result.Backend).
//
// Scenarios whose gateway feature has not landed yet are gated in one place, pendingFeatures
// in features.go; they are reported as skipped with the reason.
package e2e
