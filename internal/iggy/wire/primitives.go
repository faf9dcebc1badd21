package wire

import (
	"encoding/binary"
	"unicode/utf8"
)

// MaxNameLength is the longest name (stream, topic, group, user, token) the wire can carry.
const MaxNameLength = 255

// Identifier kinds.
const (
	IdentifierNumeric uint8 = 1
	IdentifierString  uint8 = 2
)

// Partitioning kinds of SendMessages.
const (
	PartitioningBalanced    uint8 = 1
	PartitioningPartitionID uint8 = 2
	PartitioningMessagesKey uint8 = 3
)

// CheckName reports whether s can be sent as a Name: 1..255 bytes of UTF-8.
func CheckName(what, s string) error {
	if len(s) == 0 || len(s) > MaxNameLength {
		return formatErr(codeInvalidFormat, "%s must be 1..%d bytes, got %d", what, MaxNameLength, len(s))
	}
	if !utf8.ValidString(s) {
		return formatErr(codeInvalidFormat, "%s is not valid UTF-8", what)
	}
	return nil
}

// CheckIdentifier reports whether id can be encoded.
func CheckIdentifier(what string, id Identifier) error {
	if id.IsName() {
		return CheckName(what, id.Name)
	}
	return nil
}

// AppendName appends [len:u8][s]. s must pass CheckName.
func AppendName(dst []byte, s string) []byte {
	dst = append(dst, byte(len(s)))
	return append(dst, s...)
}

// AppendIdentifier appends [kind:u8][len:u8][value]. A named identifier must pass CheckName.
func AppendIdentifier(dst []byte, id Identifier) []byte {
	if id.IsName() {
		dst = append(dst, IdentifierString)
		return AppendName(dst, id.Name)
	}
	dst = append(dst, IdentifierNumeric, 4)
	return binary.LittleEndian.AppendUint32(dst, id.Numeric)
}

// Identifier reads an Identifier.
func (r *Reader) Identifier(what string) Identifier {
	kind := r.U8(what)
	n := int(r.U8(what))
	if r.err != nil {
		return Identifier{}
	}
	switch {
	case kind == IdentifierNumeric && n == 4:
		return Identifier{Numeric: r.U32(what)}
	case kind == IdentifierString && n > 0:
		return Identifier{Name: string(r.take(n, what))}
	}
	r.Fail(formatErr(codeInvalidIdentifier, "%s: identifier kind %d with length %d", what, kind, n))
	return Identifier{}
}

// AppendConsumer appends [kind:u8][Identifier].
func AppendConsumer(dst []byte, c Consumer) []byte {
	return AppendIdentifier(append(dst, c.Kind), c.ID)
}

// Consumer reads a Consumer, accepting only the kinds of this protocol version.
func (r *Reader) Consumer(what string) Consumer {
	c := Consumer{Kind: r.U8(what)}
	c.ID = r.Identifier(what)
	if r.err == nil && c.Kind != ConsumerKindConsumer && c.Kind != ConsumerKindGroup {
		r.Fail(formatErr(codeInvalidFormat, "%s: consumer kind %d", what, c.Kind))
	}
	return c
}

// AppendOptionalPartition appends [flag:u8][partition_id:u32]; nil means unset.
func AppendOptionalPartition(dst []byte, p *uint32) []byte {
	if p == nil {
		return append(dst, 0, 0, 0, 0, 0)
	}
	return binary.LittleEndian.AppendUint32(append(dst, 1), *p)
}

// OptionalPartition reads [flag:u8][partition_id:u32]; it returns nil when the flag is 0.
func (r *Reader) OptionalPartition(what string) *uint32 {
	set := r.Bool(what)
	id := r.U32(what)
	if !set || r.err != nil {
		return nil
	}
	return &id
}

// AppendPollingStrategy appends [kind:u8][value:u64].
func AppendPollingStrategy(dst []byte, s PollingStrategy) []byte {
	return binary.LittleEndian.AppendUint64(append(dst, s.Kind), s.Value)
}

// PollingStrategy reads [kind:u8][value:u64], accepting kinds 1..5.
func (r *Reader) PollingStrategy(what string) PollingStrategy {
	s := PollingStrategy{Kind: r.U8(what), Value: r.U64(what)}
	if r.err == nil && (s.Kind < PollOffset || s.Kind > PollNext) {
		r.Fail(formatErr(codeInvalidFormat, "%s: polling strategy kind %d", what, s.Kind))
	}
	return s
}

// AppendPartitionID appends the Partitioning that targets one partition: [2][4][id:u32].
func AppendPartitionID(dst []byte, partition uint32) []byte {
	return binary.LittleEndian.AppendUint32(append(dst, PartitioningPartitionID, 4), partition)
}

// Partitioning is the decoded partitioning field of SendMessages.
type Partitioning struct {
	Kind        uint8
	PartitionID uint32 // PartitioningPartitionID
	Key         []byte // PartitioningMessagesKey, 1..255 bytes
}

// Partitioning reads [kind:u8][len:u8][value].
func (r *Reader) Partitioning(what string) Partitioning {
	p := Partitioning{Kind: r.U8(what)}
	n := int(r.U8(what))
	if r.err != nil {
		return p
	}
	switch {
	case p.Kind == PartitioningBalanced && n == 0:
	case p.Kind == PartitioningPartitionID && n == 4:
		p.PartitionID = r.U32(what)
	case p.Kind == PartitioningMessagesKey && n > 0:
		p.Key = r.take(n, what)
	default:
		r.Fail(formatErr(codeInvalidFormat, "%s: partitioning kind %d with length %d", what, p.Kind, n))
	}
	return p
}
