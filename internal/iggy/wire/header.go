package wire

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/iggygw/iggy-gateway-kafka/internal/bufpool"
)

// Frame sizes.
const (
	HeaderSize   = 256
	MaxFrameSize = 64 << 20 // header included; the server drops bigger frames
)

// Frame kinds (the command byte at offset 60).
const (
	CommandRequest  uint8 = 5
	CommandReply    uint8 = 8
	CommandEviction uint8 = 13
)

// Offsets of the fields every frame kind shares.
const (
	offSize    = 48
	offRelease = 56
	offCommand = 60
)

// RequestHeader is the header of a client → server frame (Iggy binary protocol 0.11.0). The checksum,
// cluster, view, release and replica fields are always zero on client-facing frames.
type RequestHeader struct {
	Size            uint32 // HeaderSize + body length
	Client          [16]byte
	RequestChecksum [16]byte // 0 = unstamped
	Timestamp       uint64
	Request         uint64
	Operation       uint8
	Session         uint64
	UserID          uint32
	Code            uint32 // command code, only carried by OpNonReplicated
}

// Request header offsets.
const (
	reqOffClient    = 128
	reqOffChecksum  = 144
	reqOffTimestamp = 160
	reqOffRequest   = 168
	reqOffOperation = 176
	reqOffSession   = 184
	reqOffUserID    = 192
	reqOffCode      = 196
)

// PutRequestHeader writes h into dst[:HeaderSize], zeroing every other byte.
func PutRequestHeader(dst []byte, h *RequestHeader) {
	dst = dst[:HeaderSize]
	clear(dst)
	le := binary.LittleEndian
	le.PutUint32(dst[offSize:], h.Size)
	dst[offCommand] = CommandRequest
	copy(dst[reqOffClient:], h.Client[:])
	copy(dst[reqOffChecksum:], h.RequestChecksum[:])
	le.PutUint64(dst[reqOffTimestamp:], h.Timestamp)
	le.PutUint64(dst[reqOffRequest:], h.Request)
	dst[reqOffOperation] = h.Operation
	le.PutUint64(dst[reqOffSession:], h.Session)
	le.PutUint32(dst[reqOffUserID:], h.UserID)
	if h.Operation == OpNonReplicated {
		le.PutUint32(dst[reqOffCode:], h.Code)
	}
}

// DecodeRequestHeader decodes a request header, checking the frame kind, size bounds and that
// release is zero. Field rules that depend on session state are left to Validate.
func DecodeRequestHeader(b []byte) (RequestHeader, error) {
	var h RequestHeader
	size, err := checkFrame(b, CommandRequest)
	if err != nil {
		return h, err
	}
	le := binary.LittleEndian
	if rel := le.Uint32(b[offRelease:]); rel != 0 {
		return h, formatErr(codeInvalidFormat, "request release %d, want 0", rel)
	}
	h.Size = size
	copy(h.Client[:], b[reqOffClient:])
	copy(h.RequestChecksum[:], b[reqOffChecksum:reqOffChecksum+16])
	h.Timestamp = le.Uint64(b[reqOffTimestamp:])
	h.Request = le.Uint64(b[reqOffRequest:])
	h.Operation = b[reqOffOperation]
	h.Session = le.Uint64(b[reqOffSession:])
	h.UserID = le.Uint32(b[reqOffUserID:])
	if h.Operation == OpNonReplicated {
		h.Code = le.Uint32(b[reqOffCode:])
	}
	return h, nil
}

// Validate applies the server's request field rules (validate_request_fields): a non-zero
// client id, a client-facing operation, session 0 and request 0 on Register, and a non-zero
// session and request on every operation other than NonReplicated.
func (h *RequestHeader) Validate() error {
	if h.Client == ([16]byte{}) {
		return formatErr(codeInvalidFormat, "request client id is zero")
	}
	if !ClientOperation(h.Operation) {
		return formatErr(codeInvalidFormat, "operation %d not allowed from clients", h.Operation)
	}
	switch h.Operation {
	case OpRegister:
		if h.Session != 0 || h.Request != 0 {
			return formatErr(codeInvalidFormat, "register needs session 0 and request 0")
		}
	case OpNonReplicated:
	default:
		if h.Session == 0 || h.Request == 0 {
			return formatErr(codeInvalidFormat, "operation %d needs a session and a request number", h.Operation)
		}
	}
	return nil
}

// BodyLen returns the body length the header declares.
func (h *RequestHeader) BodyLen() int { return int(h.Size) - HeaderSize }

// ReplyHeader is the header of a server → client reply (Iggy binary protocol 0.11.0).
type ReplyHeader struct {
	Size            uint32
	RequestChecksum [16]byte
	Context         [16]byte
	Client          [16]byte
	Op              uint64 // log position
	Commit          uint64
	Timestamp       uint64
	Request         uint64
	Operation       uint8
	Status          uint32 // 0 = ok, otherwise an Iggy error code
}

// Reply header offsets.
const (
	repOffChecksum  = 128
	repOffContext   = 144
	repOffClient    = 160
	repOffOp        = 176
	repOffCommit    = 184
	repOffTimestamp = 192
	repOffRequest   = 200
	repOffOperation = 208
	repOffStatus    = 216
)

// PutReplyHeader writes h into dst[:HeaderSize], zeroing every other byte.
func PutReplyHeader(dst []byte, h *ReplyHeader) {
	dst = dst[:HeaderSize]
	clear(dst)
	le := binary.LittleEndian
	le.PutUint32(dst[offSize:], h.Size)
	dst[offCommand] = CommandReply
	copy(dst[repOffChecksum:], h.RequestChecksum[:])
	copy(dst[repOffContext:], h.Context[:])
	copy(dst[repOffClient:], h.Client[:])
	le.PutUint64(dst[repOffOp:], h.Op)
	le.PutUint64(dst[repOffCommit:], h.Commit)
	le.PutUint64(dst[repOffTimestamp:], h.Timestamp)
	le.PutUint64(dst[repOffRequest:], h.Request)
	dst[repOffOperation] = h.Operation
	le.PutUint32(dst[repOffStatus:], h.Status)
}

// DecodeReplyHeader decodes a reply header, checking the frame kind and size bounds.
func DecodeReplyHeader(b []byte) (ReplyHeader, error) {
	var h ReplyHeader
	size, err := checkFrame(b, CommandReply)
	if err != nil {
		return h, err
	}
	le := binary.LittleEndian
	h.Size = size
	copy(h.RequestChecksum[:], b[repOffChecksum:])
	copy(h.Context[:], b[repOffContext:])
	copy(h.Client[:], b[repOffClient:])
	h.Op = le.Uint64(b[repOffOp:])
	h.Commit = le.Uint64(b[repOffCommit:])
	h.Timestamp = le.Uint64(b[repOffTimestamp:])
	h.Request = le.Uint64(b[repOffRequest:])
	h.Operation = b[repOffOperation]
	h.Status = le.Uint32(b[repOffStatus:])
	return h, nil
}

// EvictionHeader is the header of an eviction frame: the server ended the session.
type EvictionHeader struct {
	Client                   [16]byte
	ServerProtocolVersion    uint32 // only set for EvictIncompatibleProtocol
	ServerProtocolVersionMin uint32 // only set for EvictIncompatibleProtocol
	Reason                   uint8
}

// Eviction header offsets.
const (
	evOffClient     = 128
	evOffVersion    = 144
	evOffVersionMin = 148
	evOffReason     = 255
)

// Eviction reasons.
const (
	EvictNoSession              uint8 = 1
	EvictClientReleaseTooLow    uint8 = 2
	EvictClientReleaseTooHigh   uint8 = 3
	EvictInvalidOperation       uint8 = 4
	EvictInvalidBody            uint8 = 5
	EvictInvalidBodySize        uint8 = 6
	EvictSessionTooLow          uint8 = 7
	EvictSessionReleaseMismatch uint8 = 8
	EvictInvalidCredentials     uint8 = 9
	EvictInvalidToken           uint8 = 10
	EvictUserInactive           uint8 = 11
	EvictSessionError           uint8 = 12
	EvictStaleClient            uint8 = 13
	EvictIncompatibleProtocol   uint8 = 14
	EvictMalformedLogin         uint8 = 15
)

// PutEvictionHeader writes h into dst[:HeaderSize], zeroing every other byte.
func PutEvictionHeader(dst []byte, h *EvictionHeader) {
	dst = dst[:HeaderSize]
	clear(dst)
	le := binary.LittleEndian
	le.PutUint32(dst[offSize:], HeaderSize)
	dst[offCommand] = CommandEviction
	copy(dst[evOffClient:], h.Client[:])
	le.PutUint32(dst[evOffVersion:], h.ServerProtocolVersion)
	le.PutUint32(dst[evOffVersionMin:], h.ServerProtocolVersionMin)
	dst[evOffReason] = h.Reason
}

// DecodeEvictionHeader decodes an eviction header. Evictions never carry a body.
func DecodeEvictionHeader(b []byte) (EvictionHeader, error) {
	var h EvictionHeader
	size, err := checkFrame(b, CommandEviction)
	if err != nil {
		return h, err
	}
	if size != HeaderSize {
		return h, formatErr(codeInvalidFormat, "eviction frame size %d, want %d", size, HeaderSize)
	}
	le := binary.LittleEndian
	copy(h.Client[:], b[evOffClient:])
	h.ServerProtocolVersion = le.Uint32(b[evOffVersion:])
	h.ServerProtocolVersionMin = le.Uint32(b[evOffVersionMin:])
	h.Reason = b[evOffReason]
	return h, nil
}

// EvictionCode maps an eviction reason to the Iggy error code a client reports, as the
// official SDKs do.
func EvictionCode(reason uint8) uint32 {
	switch reason {
	case EvictInvalidCredentials:
		return 42 // InvalidCredentials
	case EvictInvalidToken:
		return 53 // InvalidPersonalAccessToken
	case EvictStaleClient:
		return 30 // StaleClient
	case EvictMalformedLogin:
		return codeInvalidFormat
	case EvictIncompatibleProtocol:
		return 14003 // IncompatibleProtocolVersion
	case EvictUserInactive:
		return 47 // UserInactive
	default:
		return 40 // Unauthenticated
	}
}

// PeekFrame returns the kind and total size of the frame whose header is b, checking the size
// bounds. It is what a reader needs to know before reading the body.
func PeekFrame(b []byte) (command uint8, size uint32, err error) {
	if len(b) < HeaderSize {
		return 0, 0, truncated("frame header", HeaderSize, len(b))
	}
	size = binary.LittleEndian.Uint32(b[offSize:])
	if size > MaxFrameSize {
		return 0, 0, &FrameSizeError{Size: size, Limit: MaxFrameSize}
	}
	if size < HeaderSize {
		return 0, 0, formatErr(codeInvalidFormat, "frame size %d outside %d..%d", size, HeaderSize, MaxFrameSize)
	}
	return b[offCommand], size, nil
}

func checkFrame(b []byte, want uint8) (uint32, error) {
	cmd, size, err := PeekFrame(b)
	if err != nil {
		return 0, err
	}
	if cmd != want {
		return 0, formatErr(codeInvalidFormat, "frame command %d, want %d", cmd, want)
	}
	return size, nil
}

// ReadFrame reads one frame from r into hdr and a body slice taken from buf (or, when buf is
// too small, from a new buffer, pooled for large bodies: see newBody) and returns the body. The declared size is checked before the body is read, so a
// hostile peer cannot make it allocate more than MaxFrameSize.
func ReadFrame(r io.Reader, hdr *[HeaderSize]byte, buf []byte) (body []byte, err error) {
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	_, size, err := PeekFrame(hdr[:])
	if err != nil {
		return nil, err
	}
	n := int(size) - HeaderSize
	if cap(buf) < n {
		buf = newBody(n)
	}
	body = buf[:n]
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("iggy wire: reading %d-byte frame body: %w", n, err)
	}
	return body, nil
}

// newBody returns a buffer for an n-byte frame body. Large ones come from the shared pool
// (not zeroed: the body is read over it), so a caller that is done with one may put it back
// (Polled.Release does); one that never does leaves it to the garbage collector.
func newBody(n int) []byte {
	if n < bufpool.MinSize {
		return make([]byte, n)
	}
	return bufpool.Get(n)
}
