package listener

import (
	"reflect"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Decoding amplifies: an array entry of a few bytes on the wire becomes a Go struct of tens of
// bytes, so a frame within MAX_FRAME_SIZE holding millions of tiny entries would decode into
// gigabytes. Before decoding a frame, its connection reserves the most its decoded request
// can take: the frame's length times the request type's amplification (decodeAmplification),
// which kmsg's decoders guarantee because they refuse an array count whose entries, at their
// smallest wire size, do not fit in the bytes left. Once decoded, the reservation shrinks to
// what the request really holds (sizeOf). docs/LIMITS.md has the numbers.

// tagAmplification bounds the decoded size of unknown tagged fields per wire byte: each tag of
// at least two bytes (tag and length varints) becomes a map entry of about 48 bytes.
const tagAmplification = 24

// entryOverhead is added to the size of an array entry's Go type: allocation rounding.
const entryOverhead = 8

// arrayAllocations: kmsg allocates each decoded array twice (append(a, make([]T, n)...)),
// and the first copy is garbage that stays resident until the next collection.
const arrayAllocations = 2

var amplifications sync.Map // int32(key<<16|version) → int64

// decodeAmplification is how many bytes of Go structures one wire byte of a request of this
// key and version can decode into, at most (strings and byte fields included, which kmsg
// copies or aliases one for one). It is measured once per key and version: for every array
// of the request type, the wire size of one more zero-valued entry is the smallest an entry
// can be, and the entry's Go size divided by it is the array's amplification.
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
const fallbackAmplification = 128

func measureAmplification(key, version int16) (a int64) {
	req := kmsg.RequestForKey(key)
	if req == nil {
		return fallbackAmplification
	}
	req.SetVersion(version)
	defer func() {
		if recover() != nil {
			a = fallbackAmplification
		}
	}()
	a = 1
	if req.IsFlexible() {
		a = tagAmplification
	}
	root := reflect.ValueOf(req)
	encoded := func() int { return len(req.AppendTo(nil)) }
	walkArrays(root.Elem(), encoded, &a)
	return a + 1
}

// walkArrays measures every array reachable from the struct v (an addressable field of the
// request), with one zero-valued entry in each enclosing array, and raises *a to the largest
// amplification found.
func walkArrays(v reflect.Value, encoded func() int, a *int64) {
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		switch {
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() != reflect.Uint8:
			elem := f.Type().Elem()
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			one := encoded()
			f.Set(reflect.MakeSlice(f.Type(), 2, 2))
			wire := encoded() - one
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			if wire > 0 {
				*a = max(*a, (entryCost(elem)+int64(wire)-1)/int64(wire))
				if elem.Kind() == reflect.Struct {
					walkArrays(f.Index(0), encoded, a)
				}
			}
			f.Set(reflect.Zero(f.Type()))
		case f.Kind() == reflect.Struct:
			walkArrays(f, encoded, a)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct:
			f.Set(reflect.New(f.Type().Elem()))
			walkArrays(f.Elem(), encoded, a)
			f.Set(reflect.Zero(f.Type()))
		}
	}
}

// entryCost is what decoding one array entry of type t allocates at most, besides its nested
// arrays and strings: the entry twice (arrayAllocations), what its pointer fields point to
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
