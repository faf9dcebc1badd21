package listener

import (
	"encoding/binary"
	"reflect"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Decoding amplifies: an array entry of a few bytes on the wire becomes a Go struct of tens of
// bytes, so a frame within MAX_FRAME_SIZE holding millions of tiny entries would decode into
// gigabytes. Before decoding a frame, its connection reserves the most decoding can allocate
// (decodeCost), and refuses a frame whose cost is more than one request may hold. Once
// decoded, the reservation shrinks to what the request really holds (sizeOf).
// docs/LIMITS.md has the numbers.

// tagAmplification bounds the decoded size of unknown tagged fields per wire byte: each tag of
// at least two bytes (tag and length varints) becomes a map entry of about 48 bytes.
const tagAmplification = 24

// entryOverhead is added to the size of an array entry's Go type: allocation rounding.
const entryOverhead = 8

// arrayAllocations: kmsg allocates each decoded array once (the compiler turns its
// append(a[:0], make([]T, n)...) into one allocation; TestDecodeEstimateBoundsAllocation
// measures it).
const arrayAllocations = 1

// decodeCopies: decodeBody decodes a body twice, the second time without its last byte to find
// bytes after the request (kmsg ignores them). Both are in memory at once.
const decodeCopies = 2

var amplifications sync.Map // int32(key<<16|version) → int64

// decodeCost is the most decoding frame (a whole request frame, header included, of key and
// version) can allocate: decodeCopies decodes, each at most the body's length times the
// request type's amplification, and one re-encoding of the body (checkCounts). A Produce
// request is walked instead (produceDecodeCost): its records alias the frame, so its cost is
// its topic and partition entries, which the walk counts exactly.
func decodeCost(key, version int16, frame []byte) int64 {
	if key == kmsg.Produce.Int16() {
		if n, ok := produceDecodeCost(version, frame); ok {
			return decodeCopies * n
		}
	}
	n := int64(len(frame))
	return decodeCopies*n*decodeAmplification(key, version) + n
}

// decodeAmplification is how many bytes of Go structures one wire byte of a request of this
// key and version can decode into, at most (strings and byte fields included, which kmsg
// copies or aliases one for one). It is measured once per key and version: for every array
// of the request type, the Go size of an entry divided by the fewest wire bytes kmsg lets an
// entry of that array take (arrayFloors).
func decodeAmplification(key, version int16) int64 {
	k := int32(key)<<16 | int32(uint16(version))
	if v, ok := amplifications.Load(k); ok {
		return v.(int64)
	}
	a := measureAmplification(key, version)
	amplifications.Store(k, a)
	return a
}

// fallbackAmplification is used if measuring fails (a request type whose zero entries cannot
// be encoded): higher than any measured one.
const fallbackAmplification = 512

func measureAmplification(key, version int16) (a int64) {
	req := kmsg.RequestForKey(key)
	if req == nil {
		return fallbackAmplification
	}
	defer func() {
		if recover() != nil {
			a = fallbackAmplification
		}
	}()
	floors := arrayFloors(key)
	arrays := map[string]array{}
	req.SetVersion(version)
	walkArrays(reflect.ValueOf(req).Elem(), "", func() int { return len(req.AppendTo(nil)) }, arrays)
	a = 1
	if req.IsFlexible() {
		a = tagAmplification
	}
	for path, arr := range arrays {
		a = max(a, (entryCost(arr.elem)+floors[path]-1)/floors[path])
	}
	return a + 1
}

// array is one array field of a request type, and the wire size of a zero-valued entry.
type array struct {
	elem reflect.Type
	wire int
}

// arrayFloors is, for every array of the request type of key (by field path), the fewest wire
// bytes kmsg lets one entry take before it allocates the array. kmsg allocates an array as
// soon as its count passes a check of count × (smallest entry size of the type over all
// versions, without tagged fields) against the bytes left, so the floor is the smallest
// zero-valued entry over all versions, less its tagged-fields byte, and never below the one
// byte per entry kmsg's reader always checks.
func arrayFloors(key int16) map[string]int64 {
	floors := map[string]int64{}
	req := kmsg.RequestForKey(key)
	for v := int16(0); v <= req.MaxVersion(); v++ {
		req := kmsg.RequestForKey(key)
		req.SetVersion(v)
		arrays := map[string]array{}
		walkArrays(reflect.ValueOf(req).Elem(), "", func() int { return len(req.AppendTo(nil)) }, arrays)
		for path, arr := range arrays {
			w := int64(arr.wire)
			if req.IsFlexible() && arr.elem.Kind() == reflect.Struct {
				w-- // its tagged fields
			}
			if arr.elem.Kind() != reflect.Struct {
				w = 1 // arrays of strings and numbers: kmsg checks one byte per entry
			}
			if f, ok := floors[path]; !ok || w < f {
				floors[path] = max(w, 1)
			}
		}
	}
	return floors
}

// walkArrays finds every array reachable from the struct v (an addressable field of the
// request), with one zero-valued entry in each enclosing array, and records the wire size of
// one more zero-valued entry of each (only arrays the version encodes: wire > 0).
func walkArrays(v reflect.Value, path string, encoded func() int, arrays map[string]array) {
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		name := path + "." + v.Type().Field(i).Name
		switch {
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() != reflect.Uint8:
			elem := f.Type().Elem()
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			one := encoded()
			f.Set(reflect.MakeSlice(f.Type(), 2, 2))
			wire := encoded() - one
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			if wire > 0 {
				arrays[name] = array{elem: elem, wire: wire}
				if elem.Kind() == reflect.Struct {
					walkArrays(f.Index(0), name, encoded, arrays)
				}
			}
			f.Set(reflect.Zero(f.Type()))
		case f.Kind() == reflect.Struct:
			walkArrays(f, name, encoded, arrays)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct:
			f.Set(reflect.New(f.Type().Elem()))
			walkArrays(f.Elem(), name, encoded, arrays)
			f.Set(reflect.Zero(f.Type()))
		}
	}
}

// entryCost is what decoding one array entry of type t allocates at most, besides its nested
// arrays and strings: the entry (arrayAllocations), what its pointer fields point to
// (kmsg allocates a *string for every nullable string it reads), and allocation rounding.
func entryCost(t reflect.Type) int64 {
	n := arrayAllocations*int64(t.Size()) + entryOverhead
	if t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			if f := t.Field(i).Type; f.Kind() == reflect.Pointer && f.Elem().Kind() != reflect.Struct {
				n += max(int64(f.Elem().Size()), 16)
			}
		}
	}
	return n
}

var (
	produceTopicCost     = entryCost(reflect.TypeFor[kmsg.ProduceRequestTopic]())
	producePartitionCost = entryCost(reflect.TypeFor[kmsg.ProduceRequestTopicPartition]())
)

// produceDecodeCost walks a Produce request frame (v3–v12) without decoding it and returns
// what one decode allocates: its topic and partition entries, topic names, the transactional
// id and unknown tagged fields. Records alias the frame and cost nothing. A Produce request is
// the one that is legitimately large (up to MAX_FRAME_SIZE of records), so it is counted as
// it is rather than by the worst case of its size: a request of millions of empty topic
// entries costs what they decode into, one of a few large batches almost nothing. ok is false
// for frames the walk cannot read (decoding them fails early; the generic estimate covers
// them).
func produceDecodeCost(version int16, frame []byte) (n int64, ok bool) {
	if version < 3 || version > 12 || len(frame) < requestHeaderFixed {
		return 0, false
	}
	flexible := version >= 9
	w := wireWalk{b: frame[requestHeaderFixed:], flexible: flexible}
	if _, rest, err := readClientID(w.b); err == nil {
		w.b = rest
	} else {
		return 0, false
	}
	if flexible {
		w.tags() // header tags
	}
	n += w.str(true) // transactional id
	w.skip(2 + 4)    // acks, timeout
	topics := w.count()
	n += int64(topics) * produceTopicCost
	for range topics {
		n += w.str(false)
		parts := w.count()
		n += int64(parts) * producePartitionCost
		for range parts {
			w.skip(4)
			w.bytes()
			n += w.tags()
		}
		n += w.tags()
		if w.bad {
			return 0, false
		}
	}
	n += w.tags()
	return n, !w.bad
}

// wireWalk reads Kafka's primitive encodings without allocating; bad is set once anything
// does not fit.
type wireWalk struct {
	b        []byte
	flexible bool
	bad      bool
}

func (w *wireWalk) skip(n int) {
	if n < 0 || n > len(w.b) {
		w.bad, w.b = true, nil
		return
	}
	w.b = w.b[n:]
}

func (w *wireWalk) uvarint() uint64 {
	v, rest, err := uvarint(w.b)
	if err != nil {
		w.bad, w.b = true, nil
		return 0
	}
	w.b = rest
	return v
}

func (w *wireWalk) int16() int {
	if len(w.b) < 2 {
		w.bad, w.b = true, nil
		return 0
	}
	v := int16(binary.BigEndian.Uint16(w.b))
	w.b = w.b[2:]
	return int(v)
}

func (w *wireWalk) int32() int {
	if len(w.b) < 4 {
		w.bad, w.b = true, nil
		return 0
	}
	v := int32(binary.BigEndian.Uint32(w.b))
	w.b = w.b[4:]
	return int(v)
}

// length reads a string, bytes or array length: negative for null.
func (w *wireWalk) length(short bool) int {
	switch {
	case w.flexible:
		return int(w.uvarint()) - 1
	case short:
		return w.int16()
	default:
		return w.int32()
	}
}

// str skips a (nullable) string and returns what decoding it allocates.
func (w *wireWalk) str(nullable bool) int64 {
	l := w.length(true)
	if l <= 0 {
		return 0
	}
	w.skip(l)
	cost := int64(l) + entryOverhead
	if nullable {
		cost += 16 // the *string
	}
	return cost
}

func (w *wireWalk) bytes() {
	if l := w.length(false); l > 0 {
		w.skip(l)
	}
}

// count reads an array count, refused (bad) where kmsg would refuse it: beyond the bytes left.
func (w *wireWalk) count() int {
	l := w.length(false)
	if l > len(w.b) {
		w.bad, w.b = true, nil
		return 0
	}
	return max(l, 0)
}

// tags skips a tagged-fields section (flexible versions) and returns what decoding it
// allocates.
func (w *wireWalk) tags() int64 {
	if !w.flexible || w.bad {
		return 0
	}
	before := len(w.b)
	rest, err := skipTags(w.b)
	if err != nil {
		w.bad, w.b = true, nil
		return 0
	}
	w.b = rest
	if used := before - len(rest); used > 1 {
		return int64(used) * tagAmplification
	}
	return 0
}

// sizeOf is about how many bytes of memory the value v refers to beyond its own header:
// slice backing arrays, strings, maps and pointed-to structs. Byte slices count only with
// countBytes: a decoded request's byte fields alias its frame, a response's do not.
func sizeOf(v reflect.Value, countBytes bool) int64 {
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len())
	case reflect.Slice:
		elem := v.Type().Elem()
		if elem.Kind() == reflect.Uint8 {
			if countBytes {
				return int64(v.Len())
			}
			return 0
		}
		n := int64(v.Cap()) * int64(elem.Size())
		if hasReferences(elem) {
			for i := range v.Len() {
				n += sizeOf(v.Index(i), countBytes)
			}
		}
		return n
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		return int64(v.Type().Elem().Size()) + sizeOf(v.Elem(), countBytes)
	case reflect.Struct:
		var n int64
		for i := range v.NumField() {
			n += sizeOf(v.Field(i), countBytes)
		}
		return n
	case reflect.Map:
		n := int64(v.Len()) * (int64(v.Type().Key().Size()+v.Type().Elem().Size()) + entryOverhead)
		for it := v.MapRange(); it.Next(); {
			n += sizeOf(it.Value(), countBytes)
		}
		return n
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return sizeOf(v.Elem(), countBytes)
	}
	return 0
}

// hasReferences reports whether values of t may refer to memory sizeOf counts.
func hasReferences(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Slice, reflect.Pointer, reflect.Map, reflect.Interface:
		return true
	case reflect.Struct:
		for i := range t.NumField() {
			if hasReferences(t.Field(i).Type) {
				return true
			}
		}
	case reflect.Array:
		return hasReferences(t.Elem())
	}
	return false
}
