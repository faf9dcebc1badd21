// Package listener serves the Kafka wire protocol over TCP: it accepts connections, reads
// 4-byte length-prefixed frames, parses request headers (v1, or v2 for flexible versions),
// decodes bodies with franz-go's kmsg, hands requests to a Dispatcher and writes responses
// strictly in request order. It knows nothing about what the requests mean.
//
// # Firewall
//
// For each frame the Dispatcher's Lookup decides whether the API key and version are served on
// this connection. Unknown keys and unlisted versions close the connection without a body; a
// Handler marked Undecoded is served without decoding (the broker uses that for ApiVersions at
// an unsupported version, KIP-511). A body that does not decode, or that leaves bytes unread,
// gets the handler's InvalidRequest response when it has one, else the connection is closed.
//
// # Security
//
// A listener with Config.TLS completes a TLS handshake (within ReadTimeout) before reading the
// first frame, and Config.ClientIdentity may then give the connection an Identity from its
// client certificate. On a Config.SASL listener, a connection without a current Identity may
// send only what one authentication takes, in Kafka's order: ApiVersions (twice at most, for a
// version downgrade), one SaslHandshake, one SaslAuthenticate, in frames of at most
// PreAuthMaxFrameSize, within ReadTimeout of opening (or of its session's end). Each is
// finished before the next frame is checked (the identity it may establish decides what the
// next request may do); the next frame's length is read meanwhile, so a client that goes away
// is noticed, and these requests are then cancelled like AbandonedOnClose ones. Any other
// request, or one more, closes the connection without being decoded. The broker's handlers
// set the Identity; see docs/SECURITY.md.
//
// # Pipelining and ordering
//
// The connection reads ahead up to MaxInFlight requests. Kafka brokers handle one request per
// connection at a time, and clients rely on it (a Produce followed by a ListOffsets on the same
// connection must see the write; two Produce requests to one partition must land in order).
// So requests take effect in arrival order. Ordered requests (the default) run one after the
// other: one starts only when every earlier request has finished, and no later request starts
// before it has finished. Consecutive requests whose handlers are marked Concurrent
// (side-effect-free reads such as Metadata or ApiVersions) may run together. Requests whose
// handlers are marked Pipelined (Produce) overlap differently: each starts once the previous
// pipelined one has done its ordered part (it calls Started, which the Produce handler does
// once its writes are queued per partition in request order) and may finish later; any other
// request waits for them to finish, and they wait for the requests before them. Responses are
// written in request order whatever order handlers finish in.
//
// # Memory
//
// Large request frames are read into buffers from internal/bufpool; a handler marked
// FrameReusable gives its frame back when it has finished, unless it took the frame
// (TakeFrame: Produce hands it to the tail cache, which counts it in its own budget). A handler that may keep referring
// to its request's bytes after returning (decoded byte fields alias the frame) must not be
// marked: its frame is left to the garbage collector.
//
// # Handler results
//
// A handler returns (response, nil) to answer, (nil, nil) to send nothing (Produce with
// acks=0), and a non-nil error to close the connection after writing the response it returned
// alongside, if any. A response wrapped in a *Response tells the writer its size, so a large
// one is encoded into a pooled buffer, and gets a Release call once the listener no longer
// refers to it, so the handler can reuse the buffers it points into.
package listener
