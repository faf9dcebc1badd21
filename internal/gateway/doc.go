// Package gateway is the composition root: it builds a whole gateway from a configuration
// and runs it, for the iggy-gateway-kafka command and for tests alike.
//
// Start brings the parts up in order: the metrics endpoint (so liveness answers while startup
// waits), the in-memory Iggy server of dev mode, the bridge to Iggy (connect with retries,
// the default stream, the committed offsets), the broker, and last the Kafka listeners, which
// share one request-memory budget (MAX_REQUEST_MEMORY). Stop reverses it: stop accepting,
// drain in-flight requests up to the drain timeout, checkpoint the committed offsets, close
// the Iggy sessions and the dev server.
package gateway
