package wire

import (
	"reflect"
	"testing"
)

// checkTruncations asserts that every strict prefix of b fails to decode (for exact layouts).
func checkTruncations(t *testing.T, what string, b []byte, dec func([]byte) error) {
	t.Helper()
	for i := range b {
		if dec(b[:i]) == nil {
			t.Fatalf("%s: %d-byte prefix of %d decoded without error", what, i, len(b))
		}
	}
}

func TestStreamGolden(t *testing.T) {
	s := &Stream{ID: 1, CreatedAt: 2, Name: "st", SizeBytes: 3, MessagesCount: 4,
		Topics: []Topic{{ID: 0, CreatedAt: 5, Name: "t", PartitionsCount: 2, MessageExpiry: Never, Compression: 1, MaxTopicSize: Never, SizeBytes: 6, MessagesCount: 7}}}
	topic := cat(u32(0), u64(5), u32(2), u64(Never), []byte{1}, u64(Never), u64(6), u64(7), []byte{1, 't'}, u32(0), u32(0))
	want := cat(u32(1), u64(2), u32(1), u64(3), u64(4), []byte{2, 's', 't'}, u32(0), topic)
	checkBytes(t, "stream details", AppendStreamDetails(nil, s), want)
	got, err := DecodeStreamDetails(want)
	s.TopicsCount = 1
	if err != nil || !reflect.DeepEqual(got, s) {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	checkTruncations(t, "stream", want, func(b []byte) error { _, err := DecodeStreamDetails(b); return err })

	// Options blocks in responses are skipped, whatever they hold.
	withOpts := cat(u32(1), u64(2), u32(0), u64(3), u64(4), []byte{2, 's', 't'}, u32(3), []byte{9, 9, 9})
	if got, err := DecodeStreamDetails(withOpts); err != nil || got.Name != "st" {
		t.Fatalf("stream with options: %+v %v", got, err)
	}

	list := AppendStreams(nil, []Stream{{ID: 0, Name: "a"}, {ID: 1, Name: "b"}})
	streams, err := DecodeStreams(list)
	if err != nil || len(streams) != 2 || streams[1].Name != "b" {
		t.Fatalf("streams %+v %v", streams, err)
	}
	if streams, err := DecodeStreams(nil); err != nil || streams != nil {
		t.Fatal("empty GetStreams body")
	}
	if _, err := DecodeStreams(list[:len(list)-1]); err == nil {
		t.Fatal("cut stream list decoded")
	}
	// A stream claiming more topics than the body can hold must not allocate for them.
	lying := cat(u32(1), u64(2), u32(0xffffffff), u64(3), u64(4), []byte{1, 's'}, u32(0))
	if _, err := DecodeStreamDetails(lying); err == nil {
		t.Fatal("stream with 2^32-1 topics decoded")
	}
}

func TestTopicGolden(t *testing.T) {
	tp := &Topic{ID: 3, CreatedAt: 9, Name: "orders", MessageExpiry: 1000, Compression: CompressionGzip, MaxTopicSize: 1 << 30,
		Partitions: []Partition{{ID: 0, CreatedAt: 1, SegmentsCount: 1, CurrentOffset: 0, SizeBytes: 0, MessagesCount: 0},
			{ID: 1, CreatedAt: 1, SegmentsCount: 2, CurrentOffset: 41, SizeBytes: 99, MessagesCount: 42}}}
	want := cat(u32(3), u64(9), u32(2), u64(1000), []byte{2}, u64(1<<30), u64(0), u64(0), []byte{6}, []byte("orders"), u32(0), u32(0),
		u32(0), u64(1), u32(1), u64(0), u64(0), u64(0),
		u32(1), u64(1), u32(2), u64(41), u64(99), u64(42))
	checkBytes(t, "topic details", AppendTopicDetails(nil, tp), want)
	got, err := DecodeTopicDetails(want)
	tp.PartitionsCount = 2
	if err != nil || !reflect.DeepEqual(got, tp) {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	if got.Partitions[0].HighWatermark() != 0 || got.Partitions[1].HighWatermark() != 42 {
		t.Fatal("HighWatermark")
	}
	checkTruncations(t, "topic", want, func(b []byte) error { _, err := DecodeTopicDetails(b); return err })

	list := AppendTopics(nil, []Topic{{ID: 0, Name: "a"}, {ID: 1, Name: "b"}})
	if want := 4 + 2*59; len(list) != want {
		t.Fatalf("GetTopics reply is %d bytes, want %d", len(list), want)
	}
	topics, err := DecodeTopics(list)
	if err != nil || len(topics) != 2 || topics[1].Name != "b" {
		t.Fatalf("topics %+v %v", topics, err)
	}
	if topics, err := DecodeTopics(nil); err != nil || topics != nil {
		t.Fatal("empty GetTopics body")
	}
	checkTruncations(t, "topics", list, func(b []byte) error {
		if len(b) == 0 {
			return errEmpty
		}
		_, err := DecodeTopics(b)
		return err
	})
	if _, err := DecodeTopics(u32(1 << 30)); err == nil {
		t.Fatal("GetTopics count 2^30 decoded")
	}
}

var errEmpty = &FormatError{Reason: "empty"}

func TestConsumerGroupGolden(t *testing.T) {
	g := &ConsumerGroup{ID: 2, Name: "grp", PartitionsCount: 3, Members: []ConsumerGroupMember{{ID: 7, Partitions: []uint32{0, 2}}, {ID: 8, Partitions: []uint32{1}}}}
	want := cat(u32(2), u32(3), u32(2), []byte{3}, []byte("grp"), u32(7), u32(2), u32(0), u32(2), u32(8), u32(1), u32(1))
	checkBytes(t, "group", AppendConsumerGroup(nil, g), want)
	got, err := DecodeConsumerGroup(want)
	g.MembersCount = 2
	if err != nil || !reflect.DeepEqual(got, g) {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	checkTruncations(t, "group", want, func(b []byte) error {
		if len(b) == 0 {
			return errEmpty
		}
		_, err := DecodeConsumerGroup(b)
		return err
	})
	if g, err := DecodeConsumerGroup(nil); g != nil || err != nil {
		t.Fatal("empty create-group payload")
	}
	list := AppendConsumerGroups(nil, []ConsumerGroup{{ID: 0, Name: "a", MembersCount: 1, PartitionsCount: 2}})
	checkBytes(t, "groups", list, cat(u32(0), u32(2), u32(1), []byte{1, 'a'}))
	gs, err := DecodeConsumerGroups(list)
	if err != nil || len(gs) != 1 || gs[0].MembersCount != 1 {
		t.Fatalf("groups %+v %v", gs, err)
	}

	a := &GroupAssignment{Generation: 5, Partitions: []uint32{1, 3}}
	wantA := cat(u64(5), u32(2), u32(1), u32(3))
	checkBytes(t, "assignment", AppendGroupAssignment(nil, a), wantA)
	gotA, err := DecodeGroupAssignment(wantA)
	if err != nil || !reflect.DeepEqual(gotA, a) {
		t.Fatalf("assignment %+v %v", gotA, err)
	}
	checkTruncations(t, "assignment", wantA, func(b []byte) error { _, err := DecodeGroupAssignment(b); return err })
}

func TestUserGolden(t *testing.T) {
	u := &User{ID: 1, CreatedAt: 2, Status: UserActive, Username: "bob"}
	base := cat(u32(1), u64(2), []byte{1, 3}, []byte("bob"), u32(0))
	noPerms := cat(base, u32(0))
	checkBytes(t, "user without permissions", AppendUserDetails(nil, u), noPerms)
	got, err := DecodeUserDetails(noPerms)
	if err != nil || !reflect.DeepEqual(got, u) {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	u.Permissions = &Permissions{Global: GlobalPermissions{ReadStreams: true}}
	perms := cat([]byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, []byte{0})
	withPerms := cat(base, []byte{1}, u32(11), perms)
	checkBytes(t, "user with permissions", AppendUserDetails(nil, u), withPerms)
	got, err = DecodeUserDetails(withPerms)
	if err != nil || !reflect.DeepEqual(got, u) {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	checkTruncations(t, "user", withPerms, func(b []byte) error { _, err := DecodeUserDetails(b); return err })
	users, err := DecodeUsers(AppendUsers(nil, []User{{ID: 0, Username: "root"}, {ID: 1, Username: "bob"}}))
	if err != nil || len(users) != 2 || users[0].Username != "root" {
		t.Fatalf("users %+v %v", users, err)
	}
}

func TestMeClusterGolden(t *testing.T) {
	m := &Me{ClientID: 5, UserID: 0, Transport: 1, Address: "1.2.3.4:5", ConsumerGroups: []MeGroup{{1, 2, 3}}}
	want := cat(u32(5), u32(0), []byte{1}, u32(9), []byte("1.2.3.4:5"), u32(1), u32(1), u32(2), u32(3))
	checkBytes(t, "me", AppendMe(nil, m), want)
	got, err := DecodeMe(want)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("me %+v %v", got, err)
	}
	checkTruncations(t, "me", want, func(b []byte) error { _, err := DecodeMe(b); return err })

	c := &ClusterMetadata{Name: "c", Nodes: []ClusterNode{{Name: "n", IP: "127.0.0.1", TCPPort: 8090, QUICPort: 8080, HTTPPort: 3000, WSPort: 8092}}}
	wantC := cat(u32(1), []byte("c"), u32(1), u32(1), []byte("n"), u32(9), []byte("127.0.0.1"),
		[]byte{0x9a, 0x1f, 0x90, 0x1f, 0xb8, 0x0b, 0x9c, 0x1f}, []byte{0, 0})
	checkBytes(t, "cluster", AppendClusterMetadata(nil, c), wantC)
	gotC, err := DecodeClusterMetadata(wantC)
	if err != nil || !reflect.DeepEqual(gotC, c) {
		t.Fatalf("cluster %+v %v", gotC, err)
	}
	checkTruncations(t, "cluster", wantC, func(b []byte) error { _, err := DecodeClusterMetadata(b); return err })
}

func TestSmallRepliesGolden(t *testing.T) {
	cs := []SendConfirmation{{StreamID: 1, TopicID: 2, PartitionID: 3, BaseOffset: 4}}
	want := cat(u32(1), u32(1), u32(2), u32(3), u64(4))
	checkBytes(t, "confirmations", AppendSendConfirmations(nil, cs), want)
	gotCs, err := DecodeSendConfirmations(want)
	if err != nil || !reflect.DeepEqual(gotCs, cs) {
		t.Fatalf("confirmations %+v %v", gotCs, err)
	}
	checkTruncations(t, "confirmations", want, func(b []byte) error { _, err := DecodeSendConfirmations(b); return err })

	o := &ConsumerOffset{PartitionID: 1, CurrentOffset: 9, StoredOffset: 4}
	wantO := cat(u32(1), u64(9), u64(4))
	checkBytes(t, "offset", AppendConsumerOffset(nil, o), wantO)
	gotO, err := DecodeConsumerOffset(wantO)
	if err != nil || *gotO != *o {
		t.Fatalf("offset %+v %v", gotO, err)
	}
	if o, err := DecodeConsumerOffset(nil); o != nil || err != nil {
		t.Fatal("empty offset body")
	}
	if _, err := DecodeConsumerOffset(wantO[:19]); err == nil {
		t.Fatal("cut offset decoded")
	}

	pats := []PersonalAccessToken{{Name: "a", ExpiryAt: 0}, {Name: "bc", ExpiryAt: 7}}
	wantP := cat([]byte{1, 'a'}, u64(0), []byte{2, 'b', 'c'}, u64(7))
	checkBytes(t, "pats", AppendPATs(nil, pats), wantP)
	gotP, err := DecodePATs(wantP)
	if err != nil || !reflect.DeepEqual(gotP, pats) {
		t.Fatalf("pats %+v %v", gotP, err)
	}
	tok, err := DecodeRawToken(AppendRawToken(nil, "secret"))
	if err != nil || tok != "secret" {
		t.Fatalf("token %q %v", tok, err)
	}
}
