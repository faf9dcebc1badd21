package kbatch

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kgoBatches produces recs with a real franz-go client (kgo) using codec, against a minimal
// in-test broker, and returns the records field of every Produce partition it received.
// This gives batches from an encoder that is not ours, byte for byte as kgo sends them.
func kgoBatches(t *testing.T, codec kgo.CompressionCodec, recs []*kgo.Record) [][]byte {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &fakeBroker{ln: ln}
	go b.serve()
	defer ln.Close()

	cl, err := kgo.NewClient(
		kgo.SeedBrokers(ln.Addr().String()),
		kgo.DefaultProduceTopic("t"),
		kgo.ProducerBatchCompression(codec),
		kgo.DisableIdempotentWrite(),
		kgo.ProducerLinger(time.Minute), // Flush sends everything as one batch
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, r := range recs {
		wg.Add(1)
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.records
}

type fakeBroker struct {
	ln      net.Listener
	mu      sync.Mutex
	records [][]byte
}

func (b *fakeBroker) serve() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		go b.handle(c)
	}
}

func (b *fakeBroker) handle(c net.Conn) {
	defer c.Close()
	for {
		var size [4]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return
		}
		frame := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(c, frame); err != nil {
			return
		}
		resp, err := b.respond(frame)
		if err != nil {
			return
		}
		if _, err := c.Write(resp); err != nil {
			return
		}
	}
}

// respond decodes one request frame and encodes the framed response.
func (b *fakeBroker) respond(frame []byte) ([]byte, error) {
	if len(frame) < 10 {
		return nil, errors.New("short frame")
	}
	key := int16(binary.BigEndian.Uint16(frame))
	version := int16(binary.BigEndian.Uint16(frame[2:]))
	corr := binary.BigEndian.Uint32(frame[4:])
	clientIDLen := int(int16(binary.BigEndian.Uint16(frame[8:])))
	body := frame[10+max(clientIDLen, 0):]
	req := kmsg.RequestForKey(key)
	if req == nil {
		return nil, errors.New("unknown key")
	}
	req.SetVersion(version)
	if req.IsFlexible() {
		body = skipTags(body)
	}
	if err := req.ReadFrom(body); err != nil {
		return nil, err
	}
	resp := req.ResponseKind()
	resp.SetVersion(version)
	switch r := req.(type) {
	case *kmsg.ApiVersionsRequest:
		ar := resp.(*kmsg.ApiVersionsResponse)
		for _, k := range []struct{ key, max int16 }{{0, 9}, {3, 12}, {18, 3}} {
			ar.ApiKeys = append(ar.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k.key, MaxVersion: k.max})
		}
	case *kmsg.MetadataRequest:
		mr := resp.(*kmsg.MetadataResponse)
		host, port, _ := net.SplitHostPort(b.ln.Addr().String())
		p, _ := strconv.Atoi(port)
		mr.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 1, Host: host, Port: int32(p)}}
		for _, rt := range r.Topics {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic = rt.Topic
			mp := kmsg.NewMetadataResponseTopicPartition()
			mp.Leader, mp.Replicas, mp.ISR = 1, []int32{1}, []int32{1}
			mt.Partitions = append(mt.Partitions, mp)
			mr.Topics = append(mr.Topics, mt)
		}
	case *kmsg.ProduceRequest:
		pr := resp.(*kmsg.ProduceResponse)
		b.mu.Lock()
		for _, rt := range r.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				b.records = append(b.records, rp.Records)
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition = rp.Partition
				st.Partitions = append(st.Partitions, sp)
			}
			pr.Topics = append(pr.Topics, st)
		}
		b.mu.Unlock()
	default:
		return nil, errors.New("unexpected request")
	}
	out := make([]byte, 4, 64)
	out = binary.BigEndian.AppendUint32(out, corr)
	if resp.IsFlexible() && key != 18 { // ApiVersions responses never carry header tags
		out = append(out, 0)
	}
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	return out, nil
}

// skipTags skips the tagged fields of a flexible request header.
func skipTags(b []byte) []byte {
	n, l := binary.Uvarint(b)
	b = b[l:]
	for range n {
		_, l = binary.Uvarint(b) // tag
		b = b[l:]
		size, l := binary.Uvarint(b)
		b = b[l+int(size):]
	}
	return b
}
