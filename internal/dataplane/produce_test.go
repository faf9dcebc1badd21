package dataplane

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"

	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

func TestProduceRefusals(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "r", 2)
	plain := testutil.ProduceBatch(t, 0, [][]byte{[]byte("a"), []byte("b")}, nil)
	corrupt := bytes.Clone(plain)
	corrupt[len(corrupt)-1] ^= 0xff
	tests := []struct {
		name string
		req  *kmsg.ProduceRequest
		want int16
	}{
		{"acks 2", testutil.ProducePartitionReq(9, 2, "r", 0, plain), kerr.InvalidRequiredAcks.Code},
		{"transactional id", func() *kmsg.ProduceRequest {
			r := testutil.ProducePartitionReq(9, -1, "r", 0, plain)
			id := "tx"
			r.TransactionID = &id
			return r
		}(), kerr.UnsupportedVersion.Code},
		{"transactional batch", testutil.ProducePartitionReq(9, -1, "r", 0, testutil.ProduceBatch(t, 0x10, [][]byte{[]byte("a")}, nil)), kerr.UnsupportedVersion.Code},
		// Kafka's LogValidator.validateBatch rules for client batches, with its codes.
		{"control batch", testutil.ProducePartitionReq(9, -1, "r", 0, testutil.ProduceBatch(t, 0x20, [][]byte{[]byte("a")}, nil)), kerr.InvalidRecord.Code},
		{"last offset delta past the count", testutil.ProducePartitionReq(9, -1, "r", 0, testutil.WithHeader(plain, func(b []byte) { binary.BigEndian.PutUint32(b[23:], 5) })), kerr.InvalidRecord.Code},
		{"negative last offset delta", testutil.ProducePartitionReq(9, -1, "r", 0, testutil.WithHeader(plain, func(b []byte) { binary.BigEndian.PutUint32(b[23:], 0xffffffff) })), kerr.InvalidRecord.Code},
		{"empty batch", testutil.ProducePartitionReq(9, -1, "r", 0, testutil.WithHeader(plain[:61], func(b []byte) {
			binary.BigEndian.PutUint32(b[8:], 61-12)
			binary.BigEndian.PutUint32(b[23:], 0)
			binary.BigEndian.PutUint32(b[57:], 0)
		})), kerr.InvalidRecord.Code},
		{"producer id without sequence", testutil.ProducePartitionReq(9, -1, "r", 0, testutil.WithHeader(plain, func(b []byte) {
			binary.BigEndian.PutUint64(b[43:], 7)
			binary.BigEndian.PutUint32(b[53:], 0xffffffff)
		})), kerr.InvalidRecord.Code},
		{"zstd before v7", testutil.ProducePartitionReq(6, -1, "r", 0, testutil.ProduceBatch(t, 4, [][]byte{[]byte("a")}, testutil.ZstdBody)), kerr.UnsupportedCompressionType.Code},
		{"unknown topic", testutil.ProducePartitionReq(9, -1, "missing", 0, plain), kerr.UnknownTopicOrPartition.Code},
		{"unknown partition", testutil.ProducePartitionReq(9, -1, "r", 2, plain), kerr.UnknownTopicOrPartition.Code},
		{"negative partition", testutil.ProducePartitionReq(9, -1, "r", -1, plain), kerr.UnknownTopicOrPartition.Code},
		{"invalid topic name", testutil.ProducePartitionReq(9, -1, "bad name!", 0, plain), kerr.InvalidTopicException.Code},
		{"bad CRC", testutil.ProducePartitionReq(9, -1, "r", 0, corrupt), kerr.CorruptMessage.Code},
		{"trailing bytes", testutil.ProducePartitionReq(9, -1, "r", 0, append(bytes.Clone(plain), 1, 2, 3)), kerr.InvalidRecord.Code},
		{"no batch", testutil.ProducePartitionReq(9, -1, "r", 0, nil), kerr.InvalidRecord.Code},
		{"magic 1", testutil.ProducePartitionReq(9, -1, "r", 0, func() []byte { b := bytes.Clone(plain); b[16] = 1; return b }()), kerr.InvalidRecord.Code},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := g.b.Produce(ctxT(t), dataConn, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			p := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
			if p.ErrorCode != tt.want || p.BaseOffset != -1 {
				t.Errorf("code %d base %d, want %d and -1", p.ErrorCode, p.BaseOffset, tt.want)
			}
			// A batch refused by the gateway's checks says why, as Kafka's broker does (v8+).
			switch tt.want {
			case kerr.InvalidRecord.Code, kerr.CorruptMessage.Code, kerr.UnsupportedCompressionType.Code:
				if p.ErrorMessage == nil || *p.ErrorMessage == "" {
					t.Error("no error message")
				}
			}
		})
	}
	if hw0, hw1 := g.hw(t, "r", 0), g.hw(t, "r", 1); hw0 != 0 || hw1 != 0 {
		t.Fatalf("refused requests wrote messages: high watermarks %d, %d", hw0, hw1)
	}
	// zstd is fine from v7; the base offset comes from Iggy.
	for i, v := range []int16{7, 9} {
		code, base := g.produceCode(t, testutil.ProducePartitionReq(v, -1, "r", 1, testutil.ProduceBatch(t, 4, [][]byte{[]byte("a"), []byte("b")}, testutil.ZstdBody)))
		if code != 0 || base != int64(2*i) {
			t.Errorf("zstd v%d: code %d base %d", v, code, base)
		}
	}
}

// One partition's refusal does not stop the others of the request.
func TestProducePartitionsIndependent(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "multi", 4)
	req := testutil.ProducePartitionReq(9, -1, "multi", 0, testutil.ProduceBatch(t, 0, [][]byte{[]byte("p0")}, nil))
	for p := int32(1); p < 4; p++ {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = p
		rp.Records = testutil.ProduceBatch(t, 1, [][]byte{fmt.Appendf(nil, "p%d-a", p), fmt.Appendf(nil, "p%d-b", p)}, testutil.GzipBody)
		if p == 2 {
			rp.Records = testutil.ProduceBatch(t, 0x10, [][]byte{[]byte("tx")}, nil)
		}
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
	}
	resp, err := g.b.Produce(ctxT(t), dataConn, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resp.(*kmsg.ProduceResponse).Topics[0].Partitions {
		want := int16(0)
		if p.Partition == 2 {
			want = kerr.UnsupportedVersion.Code
		}
		if p.ErrorCode != want || (want == 0) != (p.BaseOffset == 0) {
			t.Errorf("partition %d: code %d base %d, want code %d", p.Partition, p.ErrorCode, p.BaseOffset, want)
		}
	}
	for p, want := range []uint64{1, 2, 0, 2} {
		if hw := g.hw(t, "multi", p); hw != want {
			t.Errorf("partition %d holds %d messages, want %d", p, hw, want)
		}
	}
}

// Without the bridge nothing is stored: every partition answers NOT_LEADER_OR_FOLLOWER, and
// acks=0 closes the connection.
func TestProduceBridgeOff(t *testing.T) {
	g := startGateway(t, gatewayOpts{})
	code, _ := g.produceCode(t, testutil.ProducePartitionReq(9, -1, "t", 0, testutil.ProduceBatch(t, 0, [][]byte{[]byte("a")}, nil)))
	if code != kerr.NotLeaderForPartition.Code {
		t.Errorf("code %d", code)
	}
	if _, err := g.b.Produce(ctxT(t), dataConn, testutil.ProducePartitionReq(9, 0, "t", 0, testutil.ProduceBatch(t, 0, [][]byte{[]byte("a")}, nil))); err == nil {
		t.Error("acks=0 without the bridge: no error, want the connection closed")
	}
}

// sendFaults fails SendBatch with a chosen error, or blocks it until its context ends.
type sendFaults struct {
	iggy.API
	sendErr atomic.Pointer[error]
	block   atomic.Bool
}

func (f *sendFaults) SendBatch(ctx context.Context, stream, topic iggy.Identifier, partition uint32, b *iggy.Batch) (iggy.SendConfirmation, error) {
	if f.block.Load() {
		<-ctx.Done()
		return iggy.SendConfirmation{}, &iggy.ConnError{Op: "send messages", Err: ctx.Err(), Sent: true}
	}
	if err := f.sendErr.Load(); err != nil {
		return iggy.SendConfirmation{}, *err
	}
	return f.API.SendBatch(ctx, stream, topic, partition, b)
}

// Iggy failures map to the codes of the upstream gateway; a send that may have landed is a
// timeout (the producer retries knowing it may duplicate), and timeout_ms is honoured.
func TestProduceSendFailures(t *testing.T) {
	var fi *sendFaults
	g := startGateway(t, gatewayOpts{bridge: true, wrap: func(a iggy.API) iggy.API { fi = &sendFaults{API: a}; return fi }})
	g.mkTopic("kafka", "f", 1)
	records := testutil.ProduceBatch(t, 0, [][]byte{[]byte("x")}, nil)
	for _, tt := range []struct {
		name string
		err  error
		want int16
	}{
		{"maybe applied", &iggy.ConnError{Op: "send messages", Err: errors.New("reset"), Sent: true}, kerr.RequestTimedOut.Code},
		{"not sent", &iggy.ConnError{Op: "send messages", Err: errors.New("refused")}, kerr.NotLeaderForPartition.Code},
		{"unauthorized", &iggy.Error{Code: iggy.CodeUnauthorized}, kerr.TopicAuthorizationFailed.Code},
		{"partition gone", &iggy.Error{Code: iggy.CodePartitionNotFound}, kerr.UnknownTopicOrPartition.Code},
		{"payload too big", &iggy.Error{Code: iggy.CodeTooBigMessagePayload}, kerr.MessageTooLarge.Code},
		{"not committed", &iggy.Error{Code: iggy.CodeTransientNotCommitted}, kerr.RequestTimedOut.Code},
		{"other", &iggy.Error{Code: iggy.CodeError}, kerr.UnknownServerError.Code},
	} {
		fi.sendErr.Store(&tt.err)
		if code, _ := g.produceCode(t, testutil.ProducePartitionReq(9, -1, "f", 0, records)); code != tt.want {
			t.Errorf("%s: code %d, want %d", tt.name, code, tt.want)
		}
	}
	fi.sendErr.Store(nil)
	fi.block.Store(true)
	req := testutil.ProducePartitionReq(9, -1, "f", 0, records)
	req.TimeoutMillis = 50
	if code, _ := g.produceCode(t, req); code != kerr.RequestTimedOut.Code {
		t.Errorf("blocked send with timeout_ms 50: code %d, want REQUEST_TIMED_OUT", code)
	}
}

// A small compressed frame that would inflate to 1 GiB is refused with MESSAGE_TOO_LARGE and
// the decompression allocates about the budget (the frame limit), not the inflated size.
func TestProduceDecompressionBomb(t *testing.T) {
	const budget = 4 << 20
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{fmt.Sprintf("IGGY_KAFKA_MAX_FRAME_SIZE=%d", budget)}})
	g.mkTopic("kafka", "bomb", 1)
	bombs := map[string][]byte{
		"zstd 1 GiB of RLE blocks": testutil.ZstdRLEBomb(8192),
		"gzip 64 MiB":              testutil.GzipBody(make([]byte, 64<<20)),
	}
	for name, body := range bombs {
		codec := int16(1)
		if strings.HasPrefix(name, "zstd") {
			codec = 4
		}
		req := testutil.ProducePartitionReq(9, -1, "bomb", 0, testutil.FrameBatch(codec, time.Now().UnixMilli(), 1, body))
		g.produceCode(t, testutil.ProducePartitionReq(9, -1, "bomb", 0, testutil.ProduceBatch(t, codec, [][]byte{[]byte("warm")}, map[int16]func([]byte) []byte{1: testutil.GzipBody, 4: testutil.ZstdBody}[codec])))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		code, _ := g.produceCode(t, req)
		runtime.ReadMemStats(&after)
		if code != kerr.MessageTooLarge.Code {
			t.Errorf("%s (%d bytes): code %d, want MESSAGE_TOO_LARGE", name, len(body), code)
		}
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d-byte frame refused after allocating %d bytes", name, len(body), allocated)
		if allocated > 8*budget {
			t.Errorf("%s: allocated %d bytes with a %d-byte budget", name, allocated, budget)
		}
	}
	if hw := g.hw(t, "bomb", 0); hw != 2 {
		t.Errorf("partition holds %d messages, want only the 2 warm-up records", hw)
	}
}

// A bounded number of Produce requests decode at once; one that finds no slot before its
// timeout answers REQUEST_TIMED_OUT without writing.
func TestProduceDecodeSlots(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "slots", 1)
	var releases []func()
	for range max(4, runtime.GOMAXPROCS(0)) {
		release, err := g.b.data.acquireDecode(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	req := testutil.ProducePartitionReq(9, -1, "slots", 0, testutil.ProduceBatch(t, 0, [][]byte{[]byte("x")}, nil))
	req.TimeoutMillis = 50
	if code, _ := g.produceCode(t, req); code != kerr.RequestTimedOut.Code {
		t.Errorf("with every slot taken: code %d, want REQUEST_TIMED_OUT", code)
	}
	if hw := g.hw(t, "slots", 0); hw != 0 {
		t.Errorf("a request without a slot wrote %d messages", hw)
	}
	releases[0]()
	if code, base := g.produceCode(t, req); code != 0 || base != 0 {
		t.Errorf("with a free slot: code %d base %d", code, base)
	}
	for _, release := range releases[1:] {
		release()
	}
}
