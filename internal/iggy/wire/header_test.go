package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

// golden builds a 256-byte header from (offset, bytes) pairs written by hand from the
// reference tables, so encoders are checked against the documented layout rather than
// against their own decoders.
func golden(fields ...any) []byte {
	b := make([]byte, HeaderSize)
	for i := 0; i < len(fields); i += 2 {
		copy(b[fields[i].(int):], fields[i+1].([]byte))
	}
	return b
}

func TestRequestHeaderGolden(t *testing.T) {
	client := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	tests := []struct {
		name string
		h    RequestHeader
		want []byte
	}{{
		name: "ping before login",
		h:    RequestHeader{Size: 256, Client: client, Request: 1, Operation: OpNonReplicated, Code: CodePing},
		want: golden(
			48, []byte{0x00, 0x01, 0, 0}, // size 256
			60, []byte{5}, // command Request
			128, client[:],
			168, []byte{1, 0, 0, 0, 0, 0, 0, 0}, // request 1
			176, []byte{2}, // NonReplicated
			196, []byte{1, 0, 0, 0}, // code 1
		),
	}, {
		name: "create stream carries no code",
		h: RequestHeader{Size: 260, Client: client, Request: 7, Operation: OpCreateStream,
			Session: 0x0102030405060708, Code: CodeCreateStream},
		want: golden(
			48, []byte{0x04, 0x01, 0, 0},
			60, []byte{5},
			128, client[:],
			168, []byte{7, 0, 0, 0, 0, 0, 0, 0},
			176, []byte{128},
			184, []byte{8, 7, 6, 5, 4, 3, 2, 1},
		),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make([]byte, HeaderSize)
			for i := range got {
				got[i] = 0xEE // PutRequestHeader must zero what it does not set
			}
			PutRequestHeader(got, &tt.h)
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("encoded:\n%s\nwant:\n%s", hex.Dump(got), hex.Dump(tt.want))
			}
			back, err := DecodeRequestHeader(got)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.h
			if want.Operation != OpNonReplicated {
				want.Code = 0
			}
			if back != want {
				t.Fatalf("decoded %+v, want %+v", back, want)
			}
		})
	}
}

func TestReplyHeaderGolden(t *testing.T) {
	h := ReplyHeader{Size: 300, Client: [16]byte{9}, Request: 5, Operation: OpCreateTopic, Status: 1009,
		Op: 11, Commit: 10, Timestamp: 3}
	want := golden(
		48, []byte{0x2c, 0x01, 0, 0},
		60, []byte{8},
		160, []byte{9},
		176, []byte{11},
		184, []byte{10},
		192, []byte{3},
		200, []byte{5},
		208, []byte{132},
		216, []byte{0xf1, 0x03, 0, 0},
	)
	got := make([]byte, HeaderSize)
	PutReplyHeader(got, &h)
	if !bytes.Equal(got, want) {
		t.Fatalf("encoded:\n%s\nwant:\n%s", hex.Dump(got), hex.Dump(want))
	}
	back, err := DecodeReplyHeader(want)
	if err != nil || back != h {
		t.Fatalf("decoded %+v, %v; want %+v", back, err, h)
	}
}

func TestEvictionHeaderGolden(t *testing.T) {
	h := EvictionHeader{Client: [16]byte{7}, ServerProtocolVersion: 11264, ServerProtocolVersionMin: 11264, Reason: EvictIncompatibleProtocol}
	want := golden(
		48, []byte{0, 1, 0, 0},
		60, []byte{13},
		128, []byte{7},
		144, []byte{0x00, 0x2c, 0, 0, 0x00, 0x2c, 0, 0},
		255, []byte{14},
	)
	got := make([]byte, HeaderSize)
	PutEvictionHeader(got, &h)
	if !bytes.Equal(got, want) {
		t.Fatalf("encoded:\n%s\nwant:\n%s", hex.Dump(got), hex.Dump(want))
	}
	back, err := DecodeEvictionHeader(want)
	if err != nil || back != h {
		t.Fatalf("decoded %+v, %v; want %+v", back, err, h)
	}
}

func TestHeaderDecodeErrors(t *testing.T) {
	req := make([]byte, HeaderSize)
	PutRequestHeader(req, &RequestHeader{Size: HeaderSize, Client: [16]byte{1}, Operation: OpNonReplicated})
	tests := []struct {
		name string
		b    []byte
		dec  func([]byte) error
	}{
		{"short", req[:255], func(b []byte) error { _, err := DecodeRequestHeader(b); return err }},
		{"reply as request", golden(48, []byte{0, 1, 0, 0}, 60, []byte{8}), func(b []byte) error { _, err := DecodeRequestHeader(b); return err }},
		{"size below header", golden(48, []byte{255, 0, 0, 0}, 60, []byte{5}), func(b []byte) error { _, err := DecodeRequestHeader(b); return err }},
		{"size above max", golden(48, []byte{1, 0, 0, 4}, 60, []byte{8}), func(b []byte) error { _, err := DecodeReplyHeader(b); return err }},
		{"release set", golden(48, []byte{0, 1, 0, 0}, 56, []byte{1}, 60, []byte{5}), func(b []byte) error { _, err := DecodeRequestHeader(b); return err }},
		{"eviction with body", golden(48, []byte{1, 1, 0, 0}, 60, []byte{13}), func(b []byte) error { _, err := DecodeEvictionHeader(b); return err }},
	}
	for _, tt := range tests {
		if err := tt.dec(tt.b); err == nil {
			t.Errorf("%s: decoded without error", tt.name)
		}
	}
}

func TestRequestHeaderValidate(t *testing.T) {
	c := [16]byte{1}
	tests := []struct {
		h  RequestHeader
		ok bool
	}{
		{RequestHeader{Client: c, Operation: OpRegister}, true},
		{RequestHeader{Client: c, Operation: OpRegister, Request: 1}, false},
		{RequestHeader{Operation: OpNonReplicated}, false},
		{RequestHeader{Client: c, Operation: OpNonReplicated}, true},
		{RequestHeader{Client: c, Operation: OpCreateStream, Session: 1, Request: 1}, true},
		{RequestHeader{Client: c, Operation: OpCreateStream, Session: 1}, false},
		{RequestHeader{Client: c, Operation: OpSendMessages, Request: 1}, false},
		{RequestHeader{Client: c, Operation: 64, Session: 1, Request: 1}, false},
		{RequestHeader{Client: c, Operation: 0}, false},
	}
	for _, tt := range tests {
		if err := tt.h.Validate(); (err == nil) != tt.ok {
			t.Errorf("Validate(%+v) = %v, want ok=%v", tt.h, err, tt.ok)
		}
	}
}

func TestReadFrame(t *testing.T) {
	frame := make([]byte, HeaderSize+3)
	PutReplyHeader(frame, &ReplyHeader{Size: HeaderSize + 3})
	copy(frame[HeaderSize:], "abc")
	var hdr [HeaderSize]byte
	body, err := ReadFrame(bytes.NewReader(frame), &hdr, nil)
	if err != nil || string(body) != "abc" {
		t.Fatalf("ReadFrame = %q, %v", body, err)
	}
	if _, err := ReadFrame(bytes.NewReader(frame[:HeaderSize+1]), &hdr, nil); err == nil {
		t.Fatal("short body read without error")
	}
	huge := make([]byte, HeaderSize)
	PutReplyHeader(huge, &ReplyHeader{Size: MaxFrameSize + 1})
	if _, err := ReadFrame(bytes.NewReader(huge), &hdr, nil); err == nil || errors.Is(err, ErrTruncated) {
		t.Fatalf("oversized frame: %v", err)
	}
}

func TestOperationForCode(t *testing.T) {
	tests := []struct {
		code uint32
		op   uint8
	}{
		{CodeLoginRegister, OpRegister}, {CodeLoginRegisterPAT, OpRegister}, {CodeLogoutUser, OpLogout},
		{CodePing, OpNonReplicated}, {CodePollMessages, OpNonReplicated}, {CodeGetStream, OpNonReplicated},
		{CodeSyncConsumerGroup, OpNonReplicated}, {CodeGetPATs, OpNonReplicated}, {9999, OpNonReplicated},
		{CodeCreateStream, 128}, {CodeUpdateStream, 129}, {CodeDeleteStream, 130}, {CodePurgeStream, 131},
		{CodeCreateTopic, 132}, {CodeUpdateTopic, 133}, {CodeDeleteTopic, 134}, {CodePurgeTopic, 135},
		{CodeCreatePartitions, 136}, {CodeDeletePartitions, 137}, {CodeDeleteSegments, 138},
		{CodeCreateConsumerGroup, 139}, {CodeDeleteConsumerGroup, 140}, {CodeCreateUser, 141},
		{CodeUpdateUser, 142}, {CodeDeleteUser, 143}, {CodeChangePassword, 144}, {CodeUpdatePermissions, 145},
		{CodeCreatePAT, 146}, {CodeDeletePAT, 147}, {CodeJoinConsumerGroup, 148}, {CodeLeaveConsumerGroup, 149},
		{CodeSendMessages, 160}, {CodeStoreConsumerOffset, 161}, {CodeDeleteConsumerOffset, 162},
	}
	for _, tt := range tests {
		if got := OperationForCode(tt.code); got != tt.op {
			t.Errorf("OperationForCode(%d) = %d, want %d", tt.code, got, tt.op)
		}
		if tt.op >= 128 {
			if code, ok := CodeForOperation(tt.op); !ok || code != tt.code {
				t.Errorf("CodeForOperation(%d) = %d, %v", tt.op, code, ok)
			}
		}
	}
	if !IsResultFramed(OpCreateTopic) || IsResultFramed(OpDeleteSegments) || IsResultFramed(OpSendMessages) ||
		!IsResultFramed(OpStoreConsumerOffset) || IsResultFramed(OpNonReplicated) || IsResultFramed(OpLogout) {
		t.Error("IsResultFramed disagrees with the protocol's result-framing rule")
	}
	if !AdvancesRequest(OpCreateStream) || !AdvancesRequest(OpLogout) || AdvancesRequest(OpSendMessages) || AdvancesRequest(OpNonReplicated) {
		t.Error("AdvancesRequest disagrees with the protocol's request-numbering rule")
	}
}
