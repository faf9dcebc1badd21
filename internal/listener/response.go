package listener

import (
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
	// it has been encoded into the write buffer, or it will never be written. From then on
	// nothing in the listener refers to the memory the response points into, so the handler
	// may reuse it.
	Release func()
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
