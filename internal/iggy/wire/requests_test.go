package wire

import (
	"reflect"
	"testing"
)

func TestRequestBodiesGolden(t *testing.T) {
	s, tp := Identifier{Name: "s"}, Identifier{Numeric: 2}
	p := uint32(1)

	ct := &CreateTopicRequest{Stream: s, PartitionsCount: 3, Name: "t", Options: TopicOptions{MessageExpiry: 5}}
	want := cat([]byte{2, 1, 's'}, u32(3), []byte{1, 't'}, []byte{2}, u32(14), []byte("message_expiry"), []byte{12}, u32(8), u64(5))
	checkBytes(t, "create topic", AppendCreateTopic(nil, ct), want)
	gotCT, err := DecodeCreateTopic(want)
	if err != nil || gotCT != *ct {
		t.Fatalf("create topic %+v %v", gotCT, err)
	}

	ut := &UpdateTopicRequest{Stream: s, Topic: tp, Name: "t2", Options: TopicOptions{Compression: "none"}}
	want = cat([]byte{2, 1, 's'}, []byte{1, 4}, u32(2), []byte{2, 't', '2'}, []byte{2}, u32(21), []byte("compression_algorithm"), []byte{2}, u32(4), []byte("none"))
	checkBytes(t, "update topic", AppendUpdateTopic(nil, ut), want)
	gotUT, err := DecodeUpdateTopic(want)
	if err != nil || gotUT != *ut {
		t.Fatalf("update topic %+v %v", gotUT, err)
	}

	want = cat([]byte{2, 1, 's'}, []byte{1, 4}, u32(2), u32(4))
	checkBytes(t, "partitions", AppendPartitionsChange(nil, s, tp, 4), want)
	if a, b, n, err := DecodePartitionsChange(want); err != nil || a != s || b != tp || n != 4 {
		t.Fatalf("partitions %v %v %d %v", a, b, n, err)
	}
	checkTruncations(t, "partitions", want, func(b []byte) error { _, _, _, err := DecodePartitionsChange(b); return err })

	want = cat([]byte{1, 'x'})
	checkBytes(t, "create stream", AppendCreateStream(nil, "x"), want)
	if n, opts, err := DecodeCreateStream(want); err != nil || n != "x" || len(opts) != 0 {
		t.Fatalf("create stream %q %v", n, err)
	}

	want = cat([]byte{2, 1, 's'}, []byte{1, 4}, u32(2), []byte{1, 'g'})
	checkBytes(t, "create group", AppendCreateConsumerGroup(nil, s, tp, "g"), want)
	if a, b, n, err := DecodeCreateConsumerGroup(want); err != nil || a != s || b != tp || n != "g" {
		t.Fatal("create group decode", err)
	}

	var x, y, z Identifier
	ids := AppendIdentifiers(nil, s, tp, Identifier{Numeric: 0})
	if err := DecodeIdentifiers(ids, &x, &y, &z); err != nil || x != s || y != tp || z != (Identifier{}) {
		t.Fatalf("identifiers %v %v %v %v", x, y, z, err)
	}
	if err := DecodeIdentifiers(ids, &x, &y); err == nil {
		t.Fatal("trailing identifier accepted")
	}

	pr := &PollRequest{Consumer: Consumer{Kind: ConsumerKindConsumer, ID: Identifier{Name: "c"}}, Stream: s, Topic: tp,
		Partition: &p, Strategy: PollingStrategy{Kind: PollOffset, Value: 9}, Count: 100, AutoCommit: true}
	want = cat([]byte{1, 2, 1, 'c'}, []byte{2, 1, 's'}, []byte{1, 4}, u32(2), []byte{1}, u32(1), []byte{1}, u64(9), u32(100), []byte{1})
	checkBytes(t, "poll", AppendPollRequest(nil, pr), want)
	gotPR, err := DecodePollRequest(want)
	if err != nil || !reflect.DeepEqual(gotPR, *pr) {
		t.Fatalf("poll %+v %v", gotPR, err)
	}
	checkTruncations(t, "poll", want, func(b []byte) error { _, err := DecodePollRequest(b); return err })

	or := &OffsetRequest{Consumer: Consumer{Kind: ConsumerKindGroup, ID: Identifier{Numeric: 0}}, Stream: s, Topic: tp, Offset: 17, Ack: AckQuorum}
	target := cat([]byte{2, 1, 4}, u32(0), []byte{2, 1, 's'}, []byte{1, 4}, u32(2), []byte{0}, u32(0))
	checkBytes(t, "get offset", AppendGetConsumerOffset(nil, or), target)
	checkBytes(t, "store offset", AppendStoreConsumerOffset(nil, or), cat(target, u64(17), []byte{1}))
	checkBytes(t, "delete offset", AppendDeleteConsumerOffset(nil, or), cat(target, []byte{1}))
	if g, err := DecodeGetConsumerOffset(target); err != nil || g.Partition != nil || g.Stream != s {
		t.Fatalf("get offset %+v %v", g, err)
	}
	if g, err := DecodeStoreConsumerOffset(cat(target, u64(17), []byte{1})); err != nil || g.Offset != 17 || g.Ack != 1 {
		t.Fatalf("store offset %+v %v", g, err)
	}
	if g, err := DecodeDeleteConsumerOffset(cat(target, []byte{0})); err != nil || g.Ack != 0 {
		t.Fatalf("delete offset %+v %v", g, err)
	}

	cu := &CreateUserRequest{Username: "bob", Password: "pw", Status: UserActive, Permissions: &Permissions{}}
	want = cat([]byte{3}, []byte("bob"), []byte{2}, []byte("pw"), []byte{1}, []byte{1}, u32(11), make([]byte, 11))
	checkBytes(t, "create user", AppendCreateUser(nil, cu), want)
	gotCU, opts, err := DecodeCreateUser(want)
	if err != nil || !reflect.DeepEqual(gotCU, *cu) || len(opts) != 0 {
		t.Fatalf("create user %+v %v", gotCU, err)
	}
	cu.Permissions = nil
	checkBytes(t, "create user without permissions", AppendCreateUser(nil, cu), cat([]byte{3}, []byte("bob"), []byte{2}, []byte("pw"), []byte{1, 0}))

	want = cat([]byte{1, 4}, u32(1), []byte{0})
	checkBytes(t, "update permissions", AppendUpdatePermissions(nil, Identifier{Numeric: 1}, nil), want)
	if u, pp, err := DecodeUpdatePermissions(want); err != nil || u.Numeric != 1 || pp != nil {
		t.Fatal("update permissions decode", err)
	}

	want = cat([]byte{2, 3}, []byte("bob"), []byte{1, 'a'}, []byte{2, 'b', 'c'})
	checkBytes(t, "change password", AppendChangePassword(nil, Identifier{Name: "bob"}, "a", "bc"), want)
	if u, c, n, err := DecodeChangePassword(want); err != nil || u.Name != "bob" || c != "a" || n != "bc" {
		t.Fatal("change password decode", err)
	}

	want = cat([]byte{3}, []byte("pat"), u64(0))
	checkBytes(t, "create pat", AppendCreatePAT(nil, "pat", 0), want)
	if n, e, err := DecodeCreatePAT(want); err != nil || n != "pat" || e != 0 {
		t.Fatal("create pat decode", err)
	}
	if n, err := DecodeDeletePAT(AppendDeletePAT(nil, "pat")); err != nil || n != "pat" {
		t.Fatal("delete pat decode", err)
	}
}

func TestSendMessagesGolden(t *testing.T) {
	b := NewBatch(0)
	if err := b.AddWithID([16]byte{1}, 10, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	prefix := AppendSendMessagesPrefix(nil, Identifier{Name: "s"}, Identifier{Numeric: 0}, 2, 1)
	want := cat(u32(19), []byte{2, 1, 's'}, []byte{1, 4}, u32(0), []byte{2, 4}, u32(2), u32(1))
	checkBytes(t, "send prefix", prefix, want)
	body := cat(prefix, b.Bytes())
	req, err := DecodeSendMessages(body)
	if err != nil || req.Stream.Name != "s" || req.Partitioning.PartitionID != 2 || req.MessagesCount != 1 || len(req.Batch) != len(b.Bytes()) {
		t.Fatalf("send %+v %v", req, err)
	}
	badMeta := cat(u32(18), want[4:], b.Bytes())
	if _, err := DecodeSendMessages(badMeta); err == nil {
		t.Fatal("wrong metadata length accepted")
	}
	badCount := cat(AppendSendMessagesPrefix(nil, Identifier{Name: "s"}, Identifier{Numeric: 0}, 2, 5), b.Bytes())
	if _, err := DecodeSendMessages(badCount); err == nil {
		t.Fatal("messages count mismatch accepted")
	}
}
