package listener

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiVersionsKey is special in the response header: it never carries tagged fields, so that a
// client that does not know the broker's versions yet can always parse it (KIP-511).
const apiVersionsKey = 18

// Handler is how a Dispatcher serves one API.
type Handler struct {
	// Serve answers a decoded request. See the package documentation for its results.
	Serve func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error)
	// Concurrent handlers have no side effects that later requests on the connection could
	// observe, so consecutive concurrent requests may run at the same time.
	Concurrent bool
	// Pipelined handlers take effect in request order but may finish out of order: the next
	// pipelined request of the connection starts as soon as Serve calls Started (or returns),
	// while every other later request still waits for it to finish. Serve calls Started once
	// the part that must happen in request order is done (Produce: its writes are queued, in
	// order, per partition).
	Pipelined bool
	// FrameReusable handlers keep no reference to the request's bytes once Serve has returned
	// (decoded byte fields alias the frame), nor does their response: the frame's buffer is
	// reused for later requests then.
	FrameReusable bool
	// InvalidRequest builds the INVALID_REQUEST answer to an undecodable req (only its
	// version is set). A nil InvalidRequest, or a nil answer (the response has no error field
	// at that version), closes the connection instead.
	InvalidRequest func(req kmsg.Request) kmsg.Response
	// Undecoded handlers get a request whose version is set but whose header (after the
	// correlation id) and body are not decoded.
	Undecoded bool
	// AbandonedOnClose handlers only wait on the client's behalf (a long-poll Fetch, a
	// JoinGroup or SyncGroup parked for a rebalance): their context is cancelled as soon as the
	// client closes the connection. Every other request already read runs to completion, as
	// in Kafka, so that, say, an acks=0 Produce sent just before closing is still written.
	AbandonedOnClose bool
}

// Dispatcher routes requests. Lookup reports whether key at version is served on cc.
type Dispatcher interface {
	Lookup(cc *ConnContext, key, version int16) (Handler, bool)
}

// request is one parsed frame, ready to be served.
type request struct {
	key, version int16
	corrID       int32
	clientID     *string
	req          kmsg.Request
	h            Handler
	// invalid is the answer prepared for an undecodable body; the handler is not called.
	invalid kmsg.Response
}

// rejection is a frame that closes the connection; reason goes to the log, kind to metrics.
type rejection struct {
	reason string
	kind   Refusal
}

func (r *rejection) Error() string { return r.reason }

func reject(kind Refusal, format string, args ...any) error {
	return &rejection{reason: fmt.Sprintf(format, args...), kind: kind}
}

// parseFrameSafe is parseFrame that turns a panic (a decoder bug on hostile input) into a
// rejection of that connection instead of a crash of the process.
func parseFrameSafe(cc *ConnContext, d Dispatcher, frame []byte) (r *request, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, reject(RefusedMalformed, "request decoding panicked: %v", p)
		}
	}()
	return parseFrame(cc, d, frame)
}

// requestHeaderFixed is api key (2) + api version (2) + correlation id (4).
const requestHeaderFixed = 8

// parseFrame parses a frame (without its length prefix) and decodes the body. It returns a
// *rejection error when the connection must be closed.
func parseFrame(cc *ConnContext, d Dispatcher, frame []byte) (*request, error) {
	if len(frame) < requestHeaderFixed {
		return nil, reject(RefusedMalformed, "frame of %d bytes is shorter than a request header", len(frame))
	}
	r := &request{
		key:     int16(binary.BigEndian.Uint16(frame[0:])),
		version: int16(binary.BigEndian.Uint16(frame[2:])),
		corrID:  int32(binary.BigEndian.Uint32(frame[4:])),
	}
	h, ok := d.Lookup(cc, r.key, r.version)
	if !ok {
		return r, reject(RefusedUnsupported, "unsupported api key %d (%s) version %d", r.key, kmsg.NameForKey(r.key), r.version)
	}
	r.h = h
	r.req = kmsg.RequestForKey(r.key)
	if r.req == nil {
		return r, reject(RefusedUnsupported, "api key %d has no request type", r.key)
	}
	r.req.SetVersion(r.version)
	if h.Undecoded {
		return r, nil
	}
	rest := frame[requestHeaderFixed:]
	clientID, rest, err := readClientID(rest)
	if err != nil {
		return r, reject(RefusedMalformed, "request header: %v", err)
	}
	r.clientID = clientID
	if r.req.IsFlexible() {
		if rest, err = skipTags(rest); err != nil {
			return r, reject(RefusedMalformed, "request header tags: %v", err)
		}
	}
	if err := decodeBody(r.req, rest); err != nil {
		if h.InvalidRequest != nil {
			fresh := kmsg.RequestForKey(r.key)
			fresh.SetVersion(r.version)
			r.invalid = h.InvalidRequest(fresh)
		}
		if r.invalid == nil { // no error field to carry INVALID_REQUEST at this version
			return r, reject(RefusedMalformed, "%s v%d: %v", kmsg.NameForKey(r.key), r.version, err)
		}
		r.invalid.SetVersion(r.version)
	}
	return r, nil
}

var errTrailingBytes = errors.New("bytes left after the request body")

// decodeBody decodes body into req and rejects bytes after it. kmsg ignores trailing bytes, so
// the check decodes the body once more without its last byte: decoding consumes bytes
// deterministically, so that succeeds exactly when the full decode left at least one byte
// unread.
func decodeBody(req kmsg.Request, body []byte) error {
	if err := req.ReadFrom(body); err != nil {
		return fmt.Errorf("undecodable body: %w", err)
	}
	if len(body) == 0 {
		return nil
	}
	// Without the tolerated bytes, the body must still decode; without one more, it must not.
	cut := len(body) - 1
	if toleratesTrailingBytes(req) {
		cut = len(body) - 1 - librdkafkaQuirkBytes
		if cut < 0 {
			return nil
		}
	}
	probe := kmsg.RequestForKey(req.Key())
	probe.SetVersion(req.GetVersion())
	if probe.ReadFrom(body[:cut]) == nil {
		return errTrailingBytes
	}
	return checkCounts(req, body)
}

var errNegativeCount = errors.New("negative array count where the array is not nullable")

// checkCounts refuses a body that kmsg decoded leniently: kmsg reads a negative count of a
// non-nullable array (and a count below -1 of a nullable one) as empty, where Kafka refuses
// the request. The decoded request encodes back to the body's bytes exactly when every count
// was one it encodes itself, so the check encodes it again and compares: a negative count
// comes back as 0 (a null compact array as an empty one). Other differences are harmless
// spellings Kafka accepts too (a boolean sent as 2, say) and let through, so that no client
// is refused for them. Produce is left out: re-encoding would copy its records, and a
// negative count there only makes an empty request.
func checkCounts(req kmsg.Request, body []byte) error {
	if req.Key() == kmsg.Produce.Int16() {
		return nil
	}
	enc := req.AppendTo(make([]byte, 0, len(body)))
	// Bytes after the encoding are the tolerated librdkafka quirk (toleratesTrailingBytes).
	if n := min(len(enc), len(body)); bytes.Equal(enc[:n], body[:n]) {
		return nil
	}
	if negativeCountAt(body, enc, firstDifference(body, enc)) {
		return errNegativeCount
	}
	return nil
}

// firstDifference is the first index where a and b differ (or the shorter one ends).
func firstDifference(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// negativeCountAt reports whether the body's bytes at i are a count kmsg read as empty where
// the client sent a negative one: an int32 below zero that encodes back as 0, or a compact
// null (0) that encodes back as empty (1).
func negativeCountAt(body, enc []byte, i int) bool {
	switch {
	case i+4 <= len(body) && i+4 <= len(enc) && body[i] >= 0x80 && binary.BigEndian.Uint32(enc[i:]) == 0:
		return true
	case i < len(body) && i < len(enc) && body[i] == 0 && enc[i] == 1:
		return true
	}
	return false
}

// librdkafkaQuirkBytes is how many bytes after the body the librdkafka quirk leaves: the rest
// of a 4-byte int32 written where a 1-byte varint belongs (toleratesTrailingBytes).
const librdkafkaQuirkBytes = 3

// toleratesTrailingBytes names the one request shape real clients send with bytes after the
// body: librdkafka (up to at least 2.16) writes the null "all topics" array of Metadata v9+ as a
// 4-byte int32 instead of a 1-byte varint (librdkafka issue #5049, fix in PR #5053). Apache
// Kafka reads the first byte as a null array and ignores the rest, so every librdkafka client
// listing all topics works there; refusing it would break kcat -L and confluent-kafka.
// Decoding it as Kafka does gives the same answer Kafka gives (all topics, no auto-creation).
func toleratesTrailingBytes(req kmsg.Request) bool {
	return req.Key() == kmsg.Metadata.Int16() && req.GetVersion() >= 9
}

// readClientID reads the nullable int16-length client id of request headers v1 and v2.
func readClientID(b []byte) (*string, []byte, error) {
	if len(b) < 2 {
		return nil, nil, errors.New("truncated client id")
	}
	n := int16(binary.BigEndian.Uint16(b))
	b = b[2:]
	if n < 0 {
		return nil, b, nil
	}
	if int(n) > len(b) {
		return nil, nil, fmt.Errorf("client id of %d bytes, %d left", n, len(b))
	}
	s := string(b[:n])
	return &s, b[n:], nil
}

// skipTags skips a tagged-field section, checking every declared size against what remains.
func skipTags(b []byte) ([]byte, error) {
	n, b, err := uvarint(b)
	if err != nil {
		return nil, err
	}
	for ; n > 0; n-- {
		if _, b, err = uvarint(b); err != nil { // tag
			return nil, err
		}
		var size uint64
		if size, b, err = uvarint(b); err != nil {
			return nil, err
		}
		if size > uint64(len(b)) {
			return nil, fmt.Errorf("tagged field of %d bytes, %d left", size, len(b))
		}
		b = b[size:]
	}
	return b, nil
}

func uvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 || v > 1<<31 {
		return 0, nil, errors.New("bad unsigned varint")
	}
	return v, b[n:], nil
}

// appendResponse appends a length-prefixed response frame for resp to dst.
func appendResponse(dst []byte, corrID int32, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(corrID))
	if resp.IsFlexible() && resp.Key() != apiVersionsKey {
		dst = append(dst, 0) // response header v1: empty tagged fields
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}
