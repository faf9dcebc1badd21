package listener

import (
	"encoding/binary"
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/bufpool"
)

// Response is a handler's answer with what the writer should know about its memory. A
// handler returns a *Response in place of the kmsg response it wraps.
type Response struct {
	kmsg.Response
	// SizeHint is about how many bytes the response encodes to (0: unknown). The writer
	// encodes a large response into a pooled buffer of that size instead of growing one.
	SizeHint int
	// Release, when set, is called exactly once, when the listener is done with the response:
	// it has been written to the connection, or it will never be. From then on nothing in the
	// listener refers to the memory the response points into, so the handler may reuse it.
	Release func()
	// AppendSpliced, when set, encodes the response body exactly as its AppendTo would, except
	// that large byte fields are not copied into dst: each is appended to splices as the bytes
	// that follow dst[:At] on the wire. The writer sends dst and the spliced slices with one
	// vectored write (writev), so record batches go from the handler's buffers to the socket
	// without a copy into the response buffer (docs/PERFORMANCE.md, "Vectored writes").
	AppendSpliced func(dst []byte, splices []Splice) ([]byte, []Splice)
}

// Splice is a byte slice written after the first At bytes of a response's encoded buffer.
// Splices of one response are in wire order: their At never decreases.
type Splice struct {
	At   int
	Data []byte
}

// spliced returns the response's spliced encoder, or nil when it must be encoded whole.
func spliced(resp kmsg.Response) func([]byte, []Splice) ([]byte, []Splice) {
	if r, ok := resp.(*Response); ok {
		return r.AppendSpliced
	}
	return nil
}

// appendSplicedResponse is appendResponse for a response encoded by enc: the frame's bytes
// are head and the splices' data in between, which it lays out in bufs for one vectored
// write. It returns the frame's length on the wire with its size prefix.
func appendSplicedResponse(head []byte, splices []Splice, bufs net.Buffers, corrID int32, flexible bool,
	enc func([]byte, []Splice) ([]byte, []Splice)) ([]byte, []Splice, net.Buffers, int) {
	head = append(head, 0, 0, 0, 0)
	head = binary.BigEndian.AppendUint32(head, uint32(corrID))
	if flexible {
		head = append(head, 0) // response header v1: empty tagged fields
	}
	head, splices = enc(head, splices)
	size := len(head)
	at := 0
	for _, s := range splices {
		size += len(s.Data)
		if s.At > at {
			bufs = append(bufs, head[at:s.At])
			at = s.At
		}
		if len(s.Data) > 0 {
			bufs = append(bufs, s.Data)
		}
	}
	if at < len(head) {
		bufs = append(bufs, head[at:])
	}
	binary.BigEndian.PutUint32(head, uint32(size-4))
	return head, splices, bufs, size
}

// unwrapResponse returns the kmsg response to encode and its size hint.
func unwrapResponse(resp kmsg.Response) (kmsg.Response, int) {
	if r, ok := resp.(*Response); ok {
		return r.Response, r.SizeHint
	}
	return resp, 0
}

// releaseResponse runs the response's Release, if any.
func releaseResponse(resp kmsg.Response) {
	if r, ok := resp.(*Response); ok && r.Release != nil {
		release := r.Release
		r.Release = nil
		release()
	}
}

// maxRetainedWriteBuffer is the largest write buffer a connection keeps for itself: one large
// Fetch response must not pin its buffer for the rest of the connection's life. Larger
// responses are encoded into buffers from the shared pool, which the idle gateway gives back.
const maxRetainedWriteBuffer = 1 << 20

// writeBuffer picks the buffer to encode a response of about hint bytes into: the
// connection's own small buffer, or a pooled one when the response is known to be large.
func writeBuffer(own []byte, hint int) []byte {
	if hint > maxRetainedWriteBuffer {
		return bufpool.Get(hint)
	}
	return own[:0]
}

// keepWriteBuffer decides what happens to used after a response was written from it: a
// large buffer goes back to the pool and the connection keeps own; a small one becomes the
// connection's buffer.
func keepWriteBuffer(own, used []byte) []byte {
	if cap(used) > maxRetainedWriteBuffer {
		bufpool.Put(used)
		return own
	}
	return used
}
