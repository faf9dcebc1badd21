package wire

import (
	"encoding/binary"
	"fmt"
)

// Reader decodes little-endian fields from a byte slice. The first short read or invalid field
// sets a sticky error; later reads return zero values, so a decoder reads every field and checks
// Err once. Slices it returns alias the input.
type Reader struct {
	buf []byte
	off int
	err error
}

// NewReader returns a Reader over b.
func NewReader(b []byte) *Reader { return &Reader{buf: b} }

// Err returns the first error met, if any.
func (r *Reader) Err() error { return r.err }

// Len returns the number of unread bytes.
func (r *Reader) Len() int { return len(r.buf) - r.off }

// Offset returns the number of bytes read so far.
func (r *Reader) Offset() int { return r.off }

// Rest returns the unread bytes and consumes them.
func (r *Reader) Rest() []byte {
	b := r.buf[r.off:]
	r.off = len(r.buf)
	return b
}

// Done returns Err, or an error if unread bytes remain: bodies must parse exactly.
func (r *Reader) Done(what string) error {
	if r.err != nil {
		return r.err
	}
	if n := r.Len(); n != 0 {
		return formatErr(codeInvalidFormat, "%s: %d trailing bytes", what, n)
	}
	return nil
}

// Fail records err unless an error is already recorded.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// take returns the next n bytes, or nil after recording an error.
func (r *Reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > r.Len() {
		r.err = truncated(what, n, r.Len())
		return nil
	}
	b := r.buf[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

// Bytes returns the next n bytes (aliasing the input).
func (r *Reader) Bytes(n int, what string) []byte { return r.take(n, what) }

// U8 reads one byte.
func (r *Reader) U8(what string) uint8 {
	if b := r.take(1, what); b != nil {
		return b[0]
	}
	return 0
}

// Bool reads a one-byte boolean; like the server, any non-zero byte is true.
func (r *Reader) Bool(what string) bool { return r.U8(what) != 0 }

// U16 reads a little-endian uint16.
func (r *Reader) U16(what string) uint16 {
	if b := r.take(2, what); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

// U32 reads a little-endian uint32.
func (r *Reader) U32(what string) uint32 {
	if b := r.take(4, what); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

// U64 reads a little-endian uint64.
func (r *Reader) U64(what string) uint64 {
	if b := r.take(8, what); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// U128 reads 16 bytes as they are on the wire (little-endian u128).
func (r *Reader) U128(what string) (v [16]byte) {
	if b := r.take(16, what); b != nil {
		copy(v[:], b)
	}
	return v
}

// Name reads a Name: [len:u8][1..255 bytes].
func (r *Reader) Name(what string) string {
	n := int(r.U8(what))
	if r.err == nil && n == 0 {
		r.Fail(formatErr(codeInvalidFormat, "%s: empty name", what))
		return ""
	}
	return string(r.take(n, what))
}

// ShortBytes reads [len:u8][bytes], allowing an empty value.
func (r *Reader) ShortBytes(what string) []byte {
	return r.take(int(r.U8(what)), what)
}

// LongBytes reads [len:u32][bytes]. The length is checked against the remaining input before
// anything is sliced.
func (r *Reader) LongBytes(what string) []byte {
	n := r.U32(what)
	if r.err != nil {
		return nil
	}
	if uint64(n) > uint64(r.Len()) {
		r.err = truncated(what, int(min(uint64(n), 1<<31)), r.Len())
		return nil
	}
	return r.take(int(n), what)
}

// Count reads a u32 element count and checks that count elements of at least minSize bytes
// each fit in the remaining input, so callers can allocate count elements safely.
func (r *Reader) Count(what string, minSize int) int {
	n := r.U32(what)
	if r.err != nil {
		return 0
	}
	if minSize < 1 {
		minSize = 1
	}
	if uint64(n)*uint64(minSize) > uint64(r.Len()) {
		r.Fail(fmt.Errorf("%w: %s: %d entries of %d+ bytes, %d bytes left", ErrTruncated, what, n, minSize, r.Len()))
		return 0
	}
	return int(n)
}
