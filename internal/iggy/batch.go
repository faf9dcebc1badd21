package iggy

import "github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"

// Batch encodes messages straight into one outgoing canonical batch (see SendBatch). Reset
// and reuse it to encode without allocating.
type Batch = wire.Batch

// NewBatch returns an empty batch with room for about sizeHint bytes of payloads and headers.
func NewBatch(sizeHint int) *Batch { return wire.NewBatch(sizeHint) }

// User header kinds (for AppendHeader and ParseHeaders).
const (
	HeaderRaw     = wire.HeaderRaw
	HeaderString  = wire.HeaderString
	HeaderBool    = wire.HeaderBool
	HeaderInt8    = wire.HeaderInt8
	HeaderInt16   = wire.HeaderInt16
	HeaderInt32   = wire.HeaderInt32
	HeaderInt64   = wire.HeaderInt64
	HeaderInt128  = wire.HeaderInt128
	HeaderUint8   = wire.HeaderUint8
	HeaderUint16  = wire.HeaderUint16
	HeaderUint32  = wire.HeaderUint32
	HeaderUint64  = wire.HeaderUint64
	HeaderUint128 = wire.HeaderUint128
	HeaderFloat32 = wire.HeaderFloat32
	HeaderFloat64 = wire.HeaderFloat64
)

// User header limits: each key and value is 1..MaxHeaderFieldLength bytes, the whole block
// at most MaxUserHeadersSize bytes.
const (
	MaxHeaderFieldLength = wire.MaxHeaderFieldLength
	MaxUserHeadersSize   = wire.MaxUserHeadersSize
)

// AppendHeader appends one entry to an encoded user-headers block. Key and value must be
// 1..255 bytes; ValidateHeaders checks a finished block.
func AppendHeader(dst []byte, keyKind uint8, key []byte, valueKind uint8, value []byte) []byte {
	return wire.AppendHeader(dst, keyKind, key, valueKind, value)
}

// ParseHeaders calls fn for each entry of an encoded user-headers block until fn returns
// false. The slices alias block. A malformed block is an error.
func ParseHeaders(block []byte, fn func(keyKind uint8, key []byte, valueKind uint8, value []byte) bool) error {
	return wire.ParseHeaders(block, fn)
}

// ValidateHeaders checks an encoded user-headers block against Iggy's rules.
func ValidateHeaders(block []byte) error { return wire.ValidateHeaders(block) }
