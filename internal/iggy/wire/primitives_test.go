package wire

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"testing"
)

// cat concatenates byte pieces written by hand from the reference layouts.
func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func u32(v uint32) []byte { return le.AppendUint32(nil, v) }
func u64(v uint64) []byte { return le.AppendUint64(nil, v) }

func checkBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s encoded:\n%s\nwant:\n%s", what, hex.Dump(got), hex.Dump(want))
	}
}

func TestIdentifierGolden(t *testing.T) {
	tests := []struct {
		id   Identifier
		want []byte
	}{
		{Identifier{Numeric: 0}, []byte{1, 4, 0, 0, 0, 0}},
		{Identifier{Numeric: 0x01020304}, []byte{1, 4, 4, 3, 2, 1}},
		{Identifier{Name: "kafka"}, []byte{2, 5, 'k', 'a', 'f', 'k', 'a'}},
	}
	for _, tt := range tests {
		checkBytes(t, "identifier", AppendIdentifier(nil, tt.id), tt.want)
		r := NewReader(tt.want)
		if got := r.Identifier("id"); got != tt.id || r.Done("id") != nil {
			t.Errorf("decoded %+v (%v), want %+v", got, r.Err(), tt.id)
		}
	}
	for _, bad := range [][]byte{{1, 3, 0, 0, 0}, {2, 0}, {3, 1, 'x'}, {1, 4, 0}, {2, 5, 'a'}} {
		r := NewReader(bad)
		r.Identifier("id")
		if r.Err() == nil {
			t.Errorf("identifier % x decoded without error", bad)
		}
	}
}

func TestConsumerPartitionStrategyGolden(t *testing.T) {
	p := uint32(3)
	got := AppendConsumer(nil, Consumer{Kind: ConsumerKindGroup, ID: Identifier{Name: "g"}})
	got = AppendOptionalPartition(got, &p)
	got = AppendOptionalPartition(got, nil)
	got = AppendPollingStrategy(got, PollingStrategy{Kind: PollTimestamp, Value: 0x1122334455667788})
	got = AppendPartitionID(got, 7)
	want := cat(
		[]byte{2, 2, 1, 'g'},
		[]byte{1, 3, 0, 0, 0},
		[]byte{0, 0, 0, 0, 0},
		[]byte{2, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11},
		[]byte{2, 4, 7, 0, 0, 0},
	)
	checkBytes(t, "consumer/partition/strategy", got, want)

	r := NewReader(want)
	c := r.Consumer("c")
	p1, p2 := r.OptionalPartition("p"), r.OptionalPartition("p")
	s := r.PollingStrategy("s")
	pt := r.Partitioning("pt")
	if err := r.Done("all"); err != nil {
		t.Fatal(err)
	}
	if c.Kind != ConsumerKindGroup || c.ID.Name != "g" || p1 == nil || *p1 != 3 || p2 != nil ||
		s.Kind != PollTimestamp || s.Value != 0x1122334455667788 || pt.Kind != PartitioningPartitionID || pt.PartitionID != 7 {
		t.Fatalf("decoded %+v %v %v %+v %+v", c, p1, p2, s, pt)
	}
	for _, bad := range [][]byte{{9, 1, 4, 0, 0, 0, 0}, {0, 1, 4, 0, 0, 0, 0}} {
		r := NewReader(bad)
		r.Consumer("c")
		if r.Err() == nil {
			t.Errorf("consumer % x decoded", bad)
		}
	}
	r = NewReader([]byte{6, 0, 0, 0, 0, 0, 0, 0, 0})
	r.PollingStrategy("s")
	if r.Err() == nil {
		t.Error("strategy kind 6 decoded")
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"a", string(make([]byte, 255))} {
		if CheckName("n", ok) != nil {
			t.Errorf("CheckName(len %d) failed", len(ok))
		}
	}
	for _, bad := range []string{"", string(make([]byte, 256)), "\xff"} {
		if CheckName("n", bad) == nil {
			t.Errorf("CheckName(%q) passed", bad)
		}
	}
}

func TestUserHeadersGolden(t *testing.T) {
	block := AppendHeader(nil, HeaderString, []byte("kafka.key"), HeaderRaw, []byte{0xde, 0xad})
	block = AppendHeader(block, HeaderString, []byte("n"), HeaderUint32, u32(5))
	want := cat(
		[]byte{2}, u32(9), []byte("kafka.key"), []byte{1}, u32(2), []byte{0xde, 0xad},
		[]byte{2}, u32(1), []byte("n"), []byte{11}, u32(4), u32(5),
	)
	checkBytes(t, "headers", block, want)
	if HeaderEntrySize(9, 2) != 21 {
		t.Fatal("HeaderEntrySize")
	}
	type entry struct {
		kk uint8
		k  string
		vk uint8
		v  string
	}
	var got []entry
	if err := ParseHeaders(block, func(kk uint8, k []byte, vk uint8, v []byte) bool {
		got = append(got, entry{kk, string(k), vk, string(v)})
		return true
	}); err != nil {
		t.Fatal(err)
	}
	wantEntries := []entry{{2, "kafka.key", 1, "\xde\xad"}, {2, "n", 11, string(u32(5))}}
	if !reflect.DeepEqual(got, wantEntries) {
		t.Fatalf("parsed %+v", got)
	}
	n := 0
	_ = ParseHeaders(block, func(uint8, []byte, uint8, []byte) bool { n++; return false })
	if n != 1 {
		t.Fatalf("early stop visited %d entries", n)
	}
	if ValidateHeaders(nil) != nil || ValidateHeaders(block) != nil {
		t.Fatal("valid block rejected")
	}
}

func TestUserHeadersInvalid(t *testing.T) {
	valid := AppendHeader(nil, HeaderString, []byte("k"), HeaderRaw, []byte("v"))
	big := make([]byte, 0, MaxUserHeadersSize+300)
	for len(big) <= MaxUserHeadersSize {
		big = AppendHeader(big, HeaderRaw, bytes.Repeat([]byte{'k'}, 200), HeaderRaw, bytes.Repeat([]byte{'v'}, 200))
	}
	tests := map[string]struct {
		block []byte
		code  uint32
	}{
		"truncated":     {valid[:len(valid)-1], codeInvalidFormat},
		"key only":      {valid[:6], codeInvalidFormat},
		"kind zero":     {cat([]byte{0}, valid[1:]), codeInvalidHeaderKind},
		"empty key":     {cat([]byte{2}, u32(0), []byte{1}, u32(1), []byte("v")), codeInvalidFormat},
		"empty value":   {cat([]byte{2}, u32(1), []byte("k"), []byte{1}, u32(0)), codeInvalidFormat},
		"value 256":     {cat([]byte{2}, u32(1), []byte("k"), []byte{1}, u32(256), make([]byte, 256)), codeInvalidFormat},
		"huge length":   {cat([]byte{2}, u32(0xffffffff)), codeInvalidFormat},
		"too big block": {big, codeTooBigUserHeaders},
	}
	for name, tt := range tests {
		err := ValidateHeaders(tt.block)
		if err == nil {
			t.Errorf("%s: validated", name)
			continue
		}
		if CodeOf(err) != tt.code {
			t.Errorf("%s: code %d (%v), want %d", name, CodeOf(err), err, tt.code)
		}
	}
}

func TestOptionsGolden(t *testing.T) {
	got := AppendTopicOptions(nil, TopicOptions{Compression: "gzip", MessageExpiry: 1_000_000, MaxTopicSize: Never})
	want := cat(
		[]byte{2}, u32(21), []byte("compression_algorithm"), []byte{2}, u32(4), []byte("gzip"),
		[]byte{2}, u32(14), []byte("message_expiry"), []byte{12}, u32(8), u64(1_000_000),
		[]byte{2}, u32(14), []byte("max_topic_size"), []byte{12}, u32(8), u64(Never),
	)
	checkBytes(t, "topic options", got, want)
	if len(AppendTopicOptions(nil, TopicOptions{})) != 0 {
		t.Fatal("zero options encode to a non-empty block")
	}
	o, err := DecodeTopicOptions(want, false)
	if err != nil || o != (TopicOptions{Compression: "gzip", MessageExpiry: 1_000_000, MaxTopicSize: Never}) {
		t.Fatalf("decoded %+v, %v", o, err)
	}

	seg := AppendOption(nil, OptionSegmentSize, HeaderUint64, u64(1<<20))
	if _, err := DecodeTopicOptions(seg, true); err != nil {
		t.Fatalf("create-only option on create: %v", err)
	}
	errs := map[string]struct {
		block  []byte
		create bool
		code   uint32
	}{
		"create-only on update": {seg, false, codeUnsupportedOptionKey},
		"unknown key":           {AppendOption(nil, "replication_factor", HeaderUint8, []byte{3}), true, codeUnsupportedOptionKey},
		"bad compression":       {AppendOption(nil, OptionCompression, HeaderString, []byte("zstd")), true, codeInvalidOptionValue},
		"expiry wrong kind":     {AppendOption(nil, OptionMessageExpiry, HeaderUint32, u32(1)), true, codeInvalidOptionValue},
		"duplicate":             {cat(seg, seg), true, codeInvalidFormat},
		"raw key":               {AppendHeader(nil, HeaderRaw, []byte("k"), HeaderRaw, []byte("v")), true, codeInvalidFormat},
		"too large":             {make([]byte, MaxOptionsBytes+1), true, codeOptionsBlockTooLarge},
	}
	for name, tt := range errs {
		_, err := DecodeTopicOptions(tt.block, tt.create)
		if err == nil || CodeOf(err) != tt.code {
			t.Errorf("%s: err %v (code %d), want code %d", name, err, CodeOf(err), tt.code)
		}
	}
}

func TestPermissionsGolden(t *testing.T) {
	p := &Permissions{
		Global: GlobalPermissions{ManageServers: true, ReadTopics: true, SendMessages: true},
		Streams: []StreamPermissions{
			{StreamID: 1, ReadStream: true, Topics: []TopicPermissions{
				{TopicID: 2, PollMessages: true},
				{TopicID: 3, ManageTopic: true},
			}},
			{StreamID: 4, SendMessages: true},
		},
	}
	want := cat(
		[]byte{1, 0, 0, 0, 0, 0, 0, 1, 0, 1},        // global
		[]byte{1},                                   // has streams
		u32(1), []byte{0, 1, 0, 0, 0, 0}, []byte{1}, // stream 1, has topics
		u32(2), []byte{0, 0, 1, 0}, []byte{1}, // topic 2, has next
		u32(3), []byte{1, 0, 0, 0}, []byte{0}, // topic 3, last
		[]byte{1},                                   // has next stream
		u32(4), []byte{0, 0, 0, 0, 0, 1}, []byte{0}, // stream 4, no topics
		[]byte{0}, // last stream
	)
	checkBytes(t, "permissions", AppendPermissions(nil, p), want)
	got, err := DecodePermissions(want)
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	none := &Permissions{}
	checkBytes(t, "no permissions", AppendPermissions(nil, none), make([]byte, 11))
	for i := range want {
		if _, err := DecodePermissions(want[:i]); err == nil {
			t.Fatalf("truncated permissions (%d bytes) decoded", i)
		}
	}
}

func TestResultGolden(t *testing.T) {
	checkBytes(t, "ok", AppendResultOK(nil), []byte{0, 0, 0, 0})
	checkBytes(t, "error", AppendResultError(nil, 1012), cat(u32(1), u32(0), u32(1012)))
	payload, code, err := ParseResult(cat(u32(0), []byte("xyz")))
	if err != nil || code != 0 || string(payload) != "xyz" {
		t.Fatalf("ok: %q %d %v", payload, code, err)
	}
	_, code, err = ParseResult(cat(u32(2), u32(0), u32(2013), u32(1), u32(5)))
	if err != nil || code != 2013 {
		t.Fatalf("rejection: %d %v", code, err)
	}
	for _, bad := range [][]byte{nil, {0, 0}, cat(u32(1), u32(0)), cat(u32(3), u32(0), u32(1)), cat(u32(1), u32(0), u32(0))} {
		if _, _, err := ParseResult(bad); err == nil {
			t.Errorf("ParseResult(% x) succeeded", bad)
		}
	}
}

func TestLoginGolden(t *testing.T) {
	v := ClientVersionInfo{ProtocolVersion: ProtocolVersion, SDKName: "gw", SDKVersion: "1"}
	if ProtocolVersion != 11264 {
		t.Fatalf("ProtocolVersion = %d, want 11264 (0.11.0)", ProtocolVersion)
	}
	cvi := cat(u32(11264), []byte{2, 'g', 'w', 1, '1'})
	user := AppendLoginUser(nil, v, "iggy", "secret")
	checkBytes(t, "login user", user, cat(cvi, []byte{4}, []byte("iggy"), []byte{6}, []byte("secret"), u32(0)))
	pat := AppendLoginPAT(nil, v, "tok")
	checkBytes(t, "login pat", pat, cat(cvi, []byte{3}, []byte("tok"), u32(0)))

	l, err := DecodeLogin(user)
	if err != nil || l.Username != "iggy" || l.Password != "secret" || l.Token != "" || l.Version != v {
		t.Fatalf("user login decoded %+v, %v", l, err)
	}
	l, err = DecodeLogin(pat)
	if err != nil || l.Token != "tok" || l.Username != "" {
		t.Fatalf("pat login decoded %+v, %v", l, err)
	}
	if _, err := DecodeLogin(cat(cvi, []byte{3}, []byte("tok"))); err == nil {
		t.Fatal("login without context length decoded")
	}

	reply := AppendLoginReply(nil, LoginReply{UserID: 0, Session: 77, ServerProtocolVersion: 11264, ServerVersion: "0.9.0"})
	checkBytes(t, "login reply", reply, cat(u32(0), u64(77), u32(11264), []byte{5}, []byte("0.9.0")))
	lr, err := DecodeLoginReply(reply)
	if err != nil || lr.Session != 77 || lr.ServerVersion != "0.9.0" {
		t.Fatalf("login reply %+v, %v", lr, err)
	}
	if _, err := DecodeLoginReply(cat(u32(0), u64(0), u32(11264), []byte{1, 'x'})); err == nil {
		t.Fatal("session 0 accepted")
	}

	if !VersionCompatible(PackVersion(0, 11, 0), PackVersion(0, 11, 3)) ||
		!VersionCompatible(PackVersion(0, 11, 5), PackVersion(0, 11, 3)) ||
		VersionCompatible(PackVersion(0, 11, 0), PackVersion(0, 12, 0)) ||
		VersionCompatible(PackVersion(0, 12, 0), PackVersion(0, 11, 0)) {
		t.Fatal("VersionCompatible disagrees with the minor-scoped window")
	}
}

func TestEvictionCode(t *testing.T) {
	want := map[uint8]uint32{9: 42, 10: 53, 13: 30, 15: 4, 14: 14003, 1: 40, 7: 40, 8: 40, 12: 40, 11: 47}
	for reason, code := range want {
		if got := EvictionCode(reason); got != code {
			t.Errorf("EvictionCode(%d) = %d, want %d", reason, got, code)
		}
	}
}

func TestFlushOptions(t *testing.T) {
	on := true
	o := TopicOptions{EnforceFsync: &on, MessagesRequiredToSave: 1, SizeOfMessagesRequiredToSave: 4096}
	block := AppendTopicOptions(nil, o)
	want := cat(
		[]byte{2}, u32(13), []byte("enforce_fsync"), []byte{3}, u32(1), []byte{1},
		[]byte{2}, u32(25), []byte("messages_required_to_save"), []byte{11}, u32(4), u32(1),
		[]byte{2}, u32(33), []byte("size_of_messages_required_to_save"), []byte{12}, u32(8), u64(4096),
	)
	checkBytes(t, "flush options", block, want)
	got, err := DecodeTopicOptions(block, true)
	if err != nil || *got.EnforceFsync != true || got.MessagesRequiredToSave != 1 || got.SizeOfMessagesRequiredToSave != 4096 {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	for name, block := range map[string][]byte{
		"zero messages":      AppendOption(nil, OptionMessagesRequiredToSave, HeaderUint32, u32(0)),
		"too many messages":  AppendOption(nil, OptionMessagesRequiredToSave, HeaderUint32, u32(MaxMessagesRequiredToSave+1)),
		"too many bytes":     AppendOption(nil, OptionSizeOfMessagesRequiredToSave, HeaderUint64, u64(MaxSizeOfMessagesRequiredToSave+1)),
		"fsync not a bool":   AppendOption(nil, OptionEnforceFsync, HeaderUint8, []byte{1}),
		"messages as uint64": AppendOption(nil, OptionMessagesRequiredToSave, HeaderUint64, u64(1)),
	} {
		if _, err := DecodeTopicOptions(block, true); CodeOf(err) != codeInvalidOptionValue {
			t.Errorf("%s: err %v, want code %d", name, err, codeInvalidOptionValue)
		}
	}

	// A TopicHeader reports the explicit and derived blocks; an entry the decoder does not
	// know is skipped without hiding the others.
	off := false
	topic := Topic{ID: 1, Name: "t", Options: TopicOptions{MessagesRequiredToSave: 1},
		DerivedOptions: TopicOptions{EnforceFsync: &off, MessagesRequiredToSave: 1024, SizeOfMessagesRequiredToSave: 1 << 20}}
	dec, err := DecodeTopicDetails(AppendTopicDetails(nil, &topic))
	if err != nil {
		t.Fatal(err)
	}
	f := dec.InForce()
	if f.MessagesRequiredToSave != 1 || f.EnforceFsync == nil || *f.EnforceFsync || f.SizeOfMessagesRequiredToSave != 1<<20 {
		t.Fatalf("in force %+v", f)
	}
	newer := cat(AppendOption(nil, "some_future_key", HeaderUint8, []byte{1}), AppendOption(nil, OptionMessagesRequiredToSave, HeaderUint32, u32(7)))
	if r := DecodeReportedTopicOptions(newer); r.MessagesRequiredToSave != 7 {
		t.Fatalf("reported options with an unknown key: %+v", r)
	}
}
