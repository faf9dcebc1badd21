package wire

import "encoding/binary"

// A result section opens the body of result-framed replies: [count:u32] then count ×
// {index:u32, result:u32}. count = 0 is success and the typed payload follows; otherwise the
// request was a committed business rejection whose code is the first entry's result.

// AppendResultOK appends the success result section (count = 0); the payload follows it.
func AppendResultOK(dst []byte) []byte { return binary.LittleEndian.AppendUint32(dst, 0) }

// AppendResultError appends a one-entry result section rejecting the request with code.
func AppendResultError(dst []byte, code uint32) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, 1)
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	return binary.LittleEndian.AppendUint32(dst, code)
}

// ParseResult splits a result-framed body. On success it returns the payload and code 0; for
// a rejection it returns the first entry's result code. A body too short for the entries it
// claims is an error, never a success.
func ParseResult(body []byte) (payload []byte, code uint32, err error) {
	r := NewReader(body)
	n := r.Count("result entries", 8)
	if r.Err() != nil {
		return nil, 0, r.Err()
	}
	if n == 0 {
		return r.Rest(), 0, nil
	}
	r.U32("result index")
	code = r.U32("result code")
	if code == 0 {
		return nil, 0, formatErr(codeInvalidFormat, "result section of %d entries with code 0", n)
	}
	return nil, code, nil
}
