package wire

import (
	"bytes"
	"testing"
)

// The fuzz targets feed arbitrary bytes to every decoder a peer can reach. They must return
// an error or a value, never panic, and never allocate from an unchecked length (the fuzzer's
// memory limit catches that). Seeds come from the golden layouts; the corpus lives in
// testdata/fuzz/<FuzzName>.

func seedBatch() []byte {
	b := NewBatch(0)
	_ = b.AddWithID([16]byte{1}, 100, []byte("hello"), AppendHeader(nil, HeaderString, []byte("k"), HeaderRaw, []byte("v")))
	_ = b.AddWithID([16]byte{2}, 150, []byte("w"), nil)
	return bytes.Clone(b.Bytes())
}

func FuzzDecodeReplyHeader(f *testing.F) {
	h := make([]byte, HeaderSize)
	PutReplyHeader(h, &ReplyHeader{Size: 300, Request: 3, Operation: OpCreateTopic, Status: 1009})
	f.Add(h)
	e := make([]byte, HeaderSize)
	PutEvictionHeader(e, &EvictionHeader{Reason: EvictStaleClient})
	f.Add(e)
	f.Fuzz(func(t *testing.T, b []byte) {
		cmd, size, err := PeekFrame(b)
		if err != nil {
			return
		}
		if size < HeaderSize || size > MaxFrameSize {
			t.Fatalf("PeekFrame accepted size %d", size)
		}
		switch cmd {
		case CommandReply:
			rh, err := DecodeReplyHeader(b)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]byte, HeaderSize)
			PutReplyHeader(out, &rh)
			if back, _ := DecodeReplyHeader(out); back != rh {
				t.Fatalf("reply header round trip %+v != %+v", back, rh)
			}
		case CommandEviction:
			_, _ = DecodeEvictionHeader(b)
		case CommandRequest:
			if rq, err := DecodeRequestHeader(b); err == nil {
				_ = rq.Validate()
			}
		}
	})
}

// FuzzDecodeReplyBody runs the body decoder selected by the first byte over the rest.
func FuzzDecodeReplyBody(f *testing.F) {
	seeds := [][]byte{
		AppendStreamDetails(nil, &Stream{ID: 1, Name: "s", Topics: []Topic{{Name: "t"}}}),
		AppendTopicDetails(nil, &Topic{Name: "t", Partitions: []Partition{{ID: 0}}}),
		AppendTopics(nil, []Topic{{Name: "t"}}),
		AppendConsumerGroup(nil, &ConsumerGroup{Name: "g", Members: []ConsumerGroupMember{{ID: 1, Partitions: []uint32{0}}}}),
		AppendUserDetails(nil, &User{Username: "u", Permissions: &Permissions{Streams: []StreamPermissions{{Topics: []TopicPermissions{{}}}}}}),
		AppendMe(nil, &Me{Address: "a", ConsumerGroups: []MeGroup{{}}}),
		AppendClusterMetadata(nil, &ClusterMetadata{Name: "c", Nodes: []ClusterNode{{Name: "n"}}}),
		AppendSendConfirmations(nil, []SendConfirmation{{}}),
		AppendConsumerOffset(nil, &ConsumerOffset{}),
		AppendPATs(nil, []PersonalAccessToken{{Name: "p"}}),
		AppendGroupAssignment(nil, &GroupAssignment{Partitions: []uint32{1}}),
		AppendLoginReply(AppendResultOK(nil), LoginReply{Session: 1, ServerVersion: "v"}),
		AppendResultError(nil, 1012),
	}
	for i, s := range seeds {
		f.Add(append([]byte{byte(i)}, s...))
	}
	decoders := []func([]byte) error{
		func(b []byte) error { _, err := DecodeStreamDetails(b); return err },
		func(b []byte) error { _, err := DecodeTopicDetails(b); return err },
		func(b []byte) error { _, err := DecodeTopics(b); return err },
		func(b []byte) error { _, err := DecodeConsumerGroup(b); return err },
		func(b []byte) error { _, err := DecodeUserDetails(b); return err },
		func(b []byte) error { _, err := DecodeMe(b); return err },
		func(b []byte) error { _, err := DecodeClusterMetadata(b); return err },
		func(b []byte) error { _, err := DecodeSendConfirmations(b); return err },
		func(b []byte) error { _, err := DecodeConsumerOffset(b); return err },
		func(b []byte) error { _, err := DecodePATs(b); return err },
		func(b []byte) error { _, err := DecodeGroupAssignment(b); return err },
		func(b []byte) error {
			p, code, err := ParseResult(b)
			if err == nil && code == 0 {
				_, err = DecodeLoginReply(p)
			}
			return err
		},
		func(b []byte) error { _, err := DecodeStreams(b); return err },
		func(b []byte) error { _, err := DecodeUsers(b); return err },
		func(b []byte) error { _, err := DecodeConsumerGroups(b); return err },
		func(b []byte) error { _, err := DecodeRawToken(b); return err },
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		_ = decoders[int(b[0])%len(decoders)](b[1:])
	})
}

func FuzzDecodePolled(f *testing.F) {
	reply := AppendPollReplyHeader(nil, 0, 1, 2)
	f.Add(append(reply, seedBatch()...))
	f.Add(AppendPollReplyHeader(nil, ResyncPartition, 0, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodePolled(b, true)
		if err != nil {
			return
		}
		for _, m := range p.Messages {
			if len(m.Payload)+len(m.Headers) > len(b) {
				t.Fatal("message larger than the reply")
			}
		}
	})
}

func FuzzVerifyBatch(f *testing.F) {
	f.Add(seedBatch())
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := VerifyBatch(b)
		if err != nil {
			return
		}
		// A verified batch stays valid when stamped and sliced, as the server does.
		c := bytes.Clone(b)
		StampBatch(c, 1, 2, 3)
		if _, err := VerifyBatch(c); err != nil {
			t.Fatalf("stamped batch: %v", err)
		}
		s, err := AppendBatchSlice(nil, c, int(h.MessageCount)-1, 1)
		if err != nil {
			t.Fatalf("slice: %v", err)
		}
		if _, err := VerifyBatch(s); err != nil {
			t.Fatalf("sliced batch: %v", err)
		}
	})
}

func FuzzParseHeaders(f *testing.F) {
	f.Add(AppendHeader(AppendHeader(nil, HeaderString, []byte("k"), HeaderRaw, []byte("v")), HeaderRaw, []byte{0}, HeaderUint8, []byte{1}))
	f.Add(AppendTopicOptions(nil, TopicOptions{Compression: "gzip", MessageExpiry: 1}))
	f.Add(AppendTopicOptions(nil, TopicOptions{EnforceFsync: new(bool), MessagesRequiredToSave: 1, SizeOfMessagesRequiredToSave: 1 << 20}))
	f.Fuzz(func(t *testing.T, b []byte) {
		var rebuilt []byte
		err := ParseHeaders(b, func(kk uint8, k []byte, vk uint8, v []byte) bool {
			rebuilt = AppendHeader(rebuilt, kk, k, vk, v)
			return true
		})
		if err == nil && !bytes.Equal(rebuilt, b) {
			t.Fatalf("re-encoded block differs:\n% x\n% x", rebuilt, b)
		}
		o, err := DecodeTopicOptions(b, true)
		// What a create accepts, a TopicHeader reports the same way.
		if r := DecodeReportedTopicOptions(b); err == nil && !sameOptions(r, o) {
			t.Fatalf("reported options %+v differ from decoded %+v", r, o)
		}
	})
}

// FuzzDecodeRequest runs the request body decoder selected by the first byte: what the
// in-memory server applies to client input.
func FuzzDecodeRequest(f *testing.F) {
	p := uint32(0)
	seeds := [][]byte{
		AppendLoginUser(nil, ClientVersionInfo{ProtocolVersion, "s", "1"}, "u", "p"),
		AppendCreateTopic(nil, &CreateTopicRequest{Name: "t", PartitionsCount: 1, Options: TopicOptions{MaxTopicSize: 1}}),
		AppendPollRequest(nil, &PollRequest{Consumer: Consumer{Kind: 1}, Partition: &p, Strategy: PollingStrategy{Kind: 1}}),
		append(AppendSendMessagesPrefix(nil, Identifier{}, Identifier{}, 0, 2), seedBatch()...),
		AppendStoreConsumerOffset(nil, &OffsetRequest{Consumer: Consumer{Kind: 1}}),
		AppendCreateUser(nil, &CreateUserRequest{Username: "u", Password: "p", Permissions: &Permissions{}}),
		AppendUpdatePermissions(nil, Identifier{}, &Permissions{}),
		AppendChangePassword(nil, Identifier{}, "a", "b"),
		AppendUpdateTopic(nil, &UpdateTopicRequest{Name: "t"}),
	}
	for i, s := range seeds {
		f.Add(append([]byte{byte(i)}, s...))
	}
	decoders := []func([]byte) error{
		func(b []byte) error { _, err := DecodeLogin(b); return err },
		func(b []byte) error { _, err := DecodeCreateTopic(b); return err },
		func(b []byte) error { _, err := DecodePollRequest(b); return err },
		func(b []byte) error {
			r, err := DecodeSendMessages(b)
			if err == nil {
				_, err = VerifyBatch(r.Batch)
			}
			return err
		},
		func(b []byte) error { _, err := DecodeStoreConsumerOffset(b); return err },
		func(b []byte) error { _, _, err := DecodeCreateUser(b); return err },
		func(b []byte) error { _, _, err := DecodeUpdatePermissions(b); return err },
		func(b []byte) error { _, _, _, err := DecodeChangePassword(b); return err },
		func(b []byte) error { _, err := DecodeUpdateTopic(b); return err },
		func(b []byte) error { _, _, err := DecodeCreateStream(b); return err },
		func(b []byte) error { _, err := DecodeDeleteConsumerOffset(b); return err },
		func(b []byte) error { _, err := DecodeGetConsumerOffset(b); return err },
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		_ = decoders[int(b[0])%len(decoders)](b[1:])
	})
}

// sameOptions compares options by value (EnforceFsync by what it points to).
func sameOptions(a, b TopicOptions) bool {
	if (a.EnforceFsync == nil) != (b.EnforceFsync == nil) || (a.EnforceFsync != nil && *a.EnforceFsync != *b.EnforceFsync) {
		return false
	}
	a.EnforceFsync, b.EnforceFsync = nil, nil
	return a == b
}
