// Package wire is the codec for Apache Iggy's binary TCP protocol 0.11.0 (Iggy server 0.9.x),
// shared by the gateway's Iggy client and its in-memory Iggy server so that both speak exactly
// the same bytes.
//
// A frame is a 256-byte header (request, reply or eviction) followed by a body. Bodies are
// built with Append* functions, which append to a caller-owned slice so a whole frame can be
// encoded into one buffer, and read back with Decode* functions over a bounds-checked Reader.
// No decoder panics or allocates from an unchecked wire length: every declared length is
// checked against the bytes that remain first.
//
// Everything that changes with the protocol version is isolated: ProtocolVersion, the login
// bodies (login.go), the batch header (batch.go) and the consumer kinds (types.go).
package wire
