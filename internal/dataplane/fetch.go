package dataplane

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/bufpool"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkacode"
	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/mapping"
	"github.com/iggygw/iggy-gateway-kafka/internal/tailcache"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
	"github.com/iggygw/iggy-gateway-kafka/internal/txn"
)

const (
	// maxFetchWait caps max_wait_ms, as the upstream gateway does.
	maxFetchWait = 18 * time.Second
	// fetchReadTimeout bounds one pass of Iggy reads.
	fetchReadTimeout = 5 * time.Second
	// Poll sizes: counts are derived from the bytes wanted and the recent message size. While
	// the gateway has not seen a partition's messages yet, its first poll is kept small
	// because Iggy's average may be far off; later polls use what the previous one showed.
	firstPollCount = 64
	maxPollCount   = 4096
	maxPollRounds  = 32
	// maxParallelReads is how many partitions of one request are read from Iggy at once.
	maxParallelReads = 8
	// defaultMessageSize is assumed when nothing is known about a partition's messages.
	defaultMessageSize = 1 << 10
	// recordOverhead is about what a record adds to its data in a batch (length, attributes,
	// deltas, field lengths).
	recordOverhead = 16
)

// noRecords is a partition without data. Never nil: a null records field is -1 on the wire,
// which librdkafka refuses ("invalid MessageSetSize -1"); Kafka sends an empty one.
var noRecords = []byte{}

// fetchPart is one requested partition.
type fetchPart struct {
	key      partKey
	topic    string     // the Kafka topic
	st       *partState // set once Iggy confirmed the partition (resolveFetch)
	out      *kmsg.FetchResponseTopicPartition
	offset   int64
	maxBytes int
	epoch    int32 // the request's current_leader_epoch; -1 when not sent
	// final: answered without reading Iggy (unknown topic, bridge off); never read again.
	final bool
	// buf is the pooled buffer out.RecordBatches points into, nil when it points nowhere.
	buf []byte
	// rules are the topic's stored configs that Fetch honours (set by resolveFetch).
	rules topicRules
	// known: the partition's offsets are what the gateway already knew (resolveKnown), not
	// a read of Iggy's, so they say nothing new about truncation.
	known bool
	// hold keeps the tail cache's batch out.RecordBatches points to (tail.go).
	hold tailcache.Hold
}

// fetchTopic is one requested topic and its partitions (a range of fetchRequest.parts).
type fetchTopic struct {
	kafka      string
	target     topicmap.Target
	start, end int
}

// fetchRequest is a Fetch being served.
type fetchRequest struct {
	cc       *listener.ConnContext
	topics   []fetchTopic
	parts    []fetchPart
	maxBytes int
	// readCommitted: isolation level 1, read up to the last stable offset and leave aborted
	// records out (txn.go).
	readCommitted bool
}

// fetch reads each partition from its fetch offset, waiting up to max_wait_ms for min_bytes
// of data (docs/DATA-PATH.md). Fetch sessions are not kept: every request is a full fetch, and a
// request that continues a session gets FETCH_SESSION_ID_NOT_FOUND, after which clients fall
// back to full fetches (Java and franz-go do, librdkafka never uses sessions).
func (dp *Plane) Fetch(ctx context.Context, cc *listener.ConnContext, req *kmsg.FetchRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	if req.Version >= 7 && req.SessionEpoch != 0 && req.SessionEpoch != -1 {
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		return resp, nil
	}
	f, err := dp.newFetch(ctx, cc, req, resp)
	if err != nil {
		return nil, err // the answer does not fit what one request may hold: the connection closes
	}
	f.maxBytes = reserveFetch(ctx, f.maxBytes)
	if dp.bridgeOff() {
		for i := range f.parts {
			f.parts[i].fail(kerr.NotLeaderForPartition.Code)
		}
		return resp, nil
	}
	dp.refuseNotLedFetch(f)
	bytes, errored := dp.readFetch(ctx, f)
	if err := ctx.Err(); errors.Is(err, context.Canceled) {
		f.release()
		return nil, err // the client is gone: nobody reads the answer
	}
	wait := min(time.Duration(req.MaxWaitMillis)*time.Millisecond, maxFetchWait)
	if !errored && bytes < int(req.MinBytes) && wait > 0 {
		// While it waits, a long poll holds only the memory of what it read: the rest goes back
		// to the budget and is taken again once there is data to read, so that waiting fetches
		// (franz-go asks for 50 MiB each) do not hold other requests of their address,
		// heartbeats and commits among them, for the whole wait (docs/LIMITS.md).
		listener.Unreserve(ctx, int64(f.maxBytes-bytes))
		if err := dp.waitFetch(ctx, f, max(int(req.MinBytes), 1), wait); err != nil {
			f.release()
			return nil, err
		}
		f.maxBytes = bytes + reserveFetch(ctx, f.maxBytes-bytes)
		dp.readFetch(ctx, f)
	}
	dp.observeFetched(f)
	return &listener.Response{Response: resp, SizeHint: fetchSizeHint(resp), Release: f.release, AppendSpliced: splicedFetch(resp)}, nil
}

// release returns the record buffers to the pool once the response no longer needs them.
func (f *fetchRequest) release() {
	for i := range f.parts {
		f.parts[i].dropRecords()
	}
}

// dropRecords empties the partition's records and returns their buffer to the pool.
func (fp *fetchPart) dropRecords() {
	fp.out.RecordBatches = noRecords
	if fp.buf != nil {
		bufpool.Put(fp.buf)
		fp.buf = nil
	}
	fp.hold.Release()
}

// fetchSizeHint is a little more than the encoded size of resp: its records plus a generous
// allowance for every other field.
func fetchSizeHint(resp *kmsg.FetchResponse) int {
	const fixed, perTopic, perPartition = 64, 32, 96
	n := fixed
	for i := range resp.Topics {
		t := &resp.Topics[i]
		n += perTopic + len(t.Topic)
		for j := range t.Partitions {
			n += perPartition + len(t.Partitions[j].RecordBatches)
		}
	}
	return n
}

// minFetchReserve is the least request memory a Fetch waits for when the budget is short.
const minFetchReserve = 64 << 10

// reserveFetch takes request memory for what a Fetch may read (docs/LIMITS.md) and returns how
// many bytes it may read: all of maxBytes when the budget has them, else what is available
// now, and when almost nothing is, it waits for a little (bounded by ctx). Concurrent
// Fetches are answered with less data rather than grow memory past MAX_REQUEST_MEMORY.
func reserveFetch(ctx context.Context, maxBytes int) int {
	got := listener.ReserveUpTo(ctx, int64(maxBytes))
	if want := min(int64(maxBytes), minFetchReserve); got < want {
		if listener.Reserve(ctx, want-got) == nil {
			got = want
		}
	}
	return int(max(got, 1))
}

// reserveAnswerBytes is listener.ReserveAnswerBytes (tests count what is reserved).
var reserveAnswerBytes = listener.ReserveAnswerBytes

// Sizes of what newFetch allocates per requested topic and partition, reserved before it
// allocates them.
const (
	fetchTopicBytes      = int64(unsafe.Sizeof(kmsg.FetchResponseTopic{}) + unsafe.Sizeof(fetchTopic{}))
	fetchPartStateBytes  = int64(unsafe.Sizeof(fetchPart{}))
	fetchPartAnswerBytes = int64(unsafe.Sizeof(kmsg.FetchResponseTopicPartition{}))
)

// newFetch lays out the response in request order and resolves the topics. The answer and
// the state kept with it until it is written are reserved from the request memory budget
// before they are allocated, topic by topic, as Metadata's answer is (docs/LIMITS.md,
// "Response amplification"): a Fetch naming very many topics or partitions, unknown ones
// included, has an answer several times its decoded size. An answer that does not fit what
// one request may hold fails with listener.ErrAnswerTooLarge (the connection closes).
func (dp *Plane) newFetch(ctx context.Context, cc *listener.ConnContext, req *kmsg.FetchRequest, resp *kmsg.FetchResponse) (*fetchRequest, error) {
	n := 0
	for i := range req.Topics {
		n += len(req.Topics[i].Partitions)
	}
	// The arrays of topics and partitions as a whole first (they are allocated at once), then
	// each topic's partition answers as they are built.
	if err := reserveAnswerBytes(ctx, int64(len(req.Topics))*fetchTopicBytes+int64(n)*fetchPartStateBytes); err != nil {
		return nil, err
	}
	f := &fetchRequest{cc: cc, parts: make([]fetchPart, 0, n), topics: make([]fetchTopic, 0, len(req.Topics)), maxBytes: int(req.MaxBytes), readCommitted: req.IsolationLevel == 1}
	if f.maxBytes <= 0 || f.maxBytes > dp.cfg.Limits.MaxFrameSize {
		f.maxBytes = dp.cfg.Limits.MaxFrameSize
	}
	resp.Topics = make([]kmsg.FetchResponseTopic, len(req.Topics))
	for i := range req.Topics {
		rt, t := &req.Topics[i], &resp.Topics[i]
		*t = kmsg.NewFetchResponseTopic()
		t.Topic = rt.Topic
		if err := reserveAnswerBytes(ctx, int64(len(rt.Partitions))*fetchPartAnswerBytes); err != nil {
			return nil, err
		}
		t.Partitions = make([]kmsg.FetchResponseTopicPartition, len(rt.Partitions))
		ft := fetchTopic{kafka: rt.Topic, start: len(f.parts)}
		valid := topicmap.ValidateKafkaName(rt.Topic) == nil
		if valid && !dp.bridgeOff() {
			ft.target = dp.topics.Map().Resolve(rt.Topic)
		}
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			t.Partitions[j] = kmsg.NewFetchResponseTopicPartition()
			fp := fetchPart{topic: rt.Topic, out: &t.Partitions[j], offset: rp.FetchOffset, maxBytes: int(rp.PartitionMaxBytes), epoch: rp.CurrentLeaderEpoch}
			fp.out.Partition = rp.Partition
			fp.fail(0) // no offsets until read
			switch {
			case !valid || rp.Partition < 0:
				fp.fail(kerr.UnknownTopicOrPartition.Code)
			case !dp.bridgeOff():
				fp.key = partKey{Target: ft.target, Partition: uint32(rp.Partition)}
			}
			f.parts = append(f.parts, fp)
		}
		ft.end = len(f.parts)
		f.topics = append(f.topics, ft)
	}
	return f, nil
}

// fail answers the partition with code and no offsets; a non-zero code is final.
func (fp *fetchPart) fail(code int16) {
	fp.out.ErrorCode = code
	fp.out.HighWatermark, fp.out.LastStableOffset, fp.out.LogStartOffset = -1, -1, -1
	fp.dropRecords()
	if code != 0 {
		fp.final = true
	}
}

// readFetch reads every partition once within max_bytes (KIP-74: the first partition with
// data returns at least one record). It returns the bytes read and whether a partition got an
// error, which ends a long poll.
func (dp *Plane) readFetch(ctx context.Context, f *fetchRequest) (bytes int, errored bool) {
	ctx, cancel := context.WithTimeout(ctx, fetchReadTimeout)
	defer cancel()
	reads, errored := dp.resolveFetch(ctx, f)
	if len(reads) > 1 && fitsTogether(reads, f.maxBytes) {
		return dp.readParallel(ctx, f, reads), errored
	}
	remaining := f.maxBytes
	for i := range reads {
		r := &reads[i]
		if code := dp.readOne(ctx, f, r, remaining, bytes == 0); code != 0 {
			r.fp.fail(code)
			errored = true
			continue
		}
		bytes += len(r.fp.out.RecordBatches)
		remaining -= len(r.fp.out.RecordBatches)
	}
	return bytes, errored
}

// partRead is a partition to read and its offsets as Iggy reported them.
type partRead struct {
	fp   *fetchPart
	ip   iggy.Partition
	code int16 // outcome of a parallel read
}

// resolveFetch reads the offsets of every requested topic and returns the partitions to read,
// in request order; partitions that cannot be read are answered with their error.
func (dp *Plane) resolveFetch(ctx context.Context, f *fetchRequest) (reads []partRead, errored bool) {
	for ti := range f.topics {
		ft := &f.topics[ti]
		parts := f.parts[ft.start:ft.end]
		if allFinal(parts) {
			errored = errored || len(parts) > 0
			continue
		}
		if known, ok := dp.resolveKnown(ctx, ft.kafka, parts); ok {
			reads = append(reads, known...)
			continue
		}
		topic, err := dp.storage(f.cc).GetTopic(ctx, iggy.Name(ft.target.Stream), iggy.Name(ft.target.Topic))
		if err != nil {
			code := kafkacode.ForFetch(kafkacode.ForData(err, false))
			if kafkacode.IsNotFound(err) {
				dp.topics.Invalidate(ft.kafka)
				dp.tail.InvalidateTopic(ft.target.Stream, ft.target.Topic)
			} else {
				dp.warnIggy(ctx, "fetch: topic read failed", "conn", f.cc.ID, "topic", ft.kafka, "kafka_error", code, "err", err)
			}
			for i := range parts {
				parts[i].fail(code)
			}
			errored = true
			continue
		}
		rules := dp.rulesOf(ctx, ft.kafka, topic.ID)
		for i := range parts {
			fp := &parts[i]
			if fp.final {
				errored = true
				continue
			}
			fp.rules = rules
			ip, ok := PartitionOf(topic, fp.out.Partition)
			if !ok {
				fp.fail(kerr.UnknownTopicOrPartition.Code)
				errored = true
				continue
			}
			fp.st = dp.data.part(fp.key) // only now: Iggy confirmed the partition exists
			dp.noteTopic(fp.key, fp.st, topic.ID, topic.CreatedAt, dp.data.now())
			reads = append(reads, partRead{fp: fp, ip: *ip})
		}
	}
	return reads, errored
}

// resolveKnown returns the reads of a topic's partitions without asking Iggy for its offsets
// when every one of them is behind the high watermark the gateway already knows (from its
// writes, polls and probes): a consumer catching up reads what is known to be there, and
// one at the known end asks Iggy, which also notices native writes and a deleted topic. The
// topic's stored rules (log start, timestamp type) apply as after a GetTopic.
func (dp *Plane) resolveKnown(ctx context.Context, kafka string, parts []fetchPart) ([]partRead, bool) {
	reads := make([]partRead, 0, len(parts))
	for i := range parts {
		fp := &parts[i]
		if fp.final {
			return nil, false
		}
		st := dp.data.known(fp.key)
		if st == nil {
			return nil, false
		}
		ip, topicID, ok := st.knownPartition(fp.key.Partition, dp.data.now())
		if !ok || fp.offset < 0 || uint64(fp.offset) >= HighWatermark(&ip) {
			return nil, false
		}
		fp.st, fp.rules, fp.known = st, dp.rulesOf(ctx, kafka, topicID), true
		reads = append(reads, partRead{fp: fp, ip: ip})
	}
	return reads, true
}

// fitsTogether reports whether every partition can be read up to its own limit without the
// request's max_bytes coming into play, so that the partitions can be read independently.
func fitsTogether(reads []partRead, maxBytes int) bool {
	total := 0
	for i := range reads {
		total += max(reads[i].fp.maxBytes, 0)
		if total > maxBytes {
			return false
		}
	}
	return true
}

// readParallel reads partitions that fit together at the same time, over the Iggy pool, then
// applies KIP-74 in request order as a sequential read would: only the first partition with
// data may exceed its limit (with its first record), and the total stays within max_bytes
// except for that record. It returns the bytes read.
func (dp *Plane) readParallel(ctx context.Context, f *fetchRequest, reads []partRead) (bytes int) {
	sem := make(chan struct{}, maxParallelReads)
	var wg sync.WaitGroup
	for i := range reads {
		r := &reads[i]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r.code = dp.readOne(ctx, f, r, r.fp.maxBytes, true)
		})
	}
	wg.Wait()
	for i := range reads {
		fp := reads[i].fp
		if code := reads[i].code; code != 0 {
			fp.fail(code)
			continue
		}
		n := len(fp.out.RecordBatches)
		if bytes > 0 && n > min(fp.maxBytes, f.maxBytes-bytes) {
			fp.dropRecords() // a later fetch, where it comes first, gets its oversized first record
			continue
		}
		bytes += n
	}
	return bytes
}

// readOne reads one partition (readPartition) with a pooled encoder. A panic is that
// partition's UNKNOWN_SERVER_ERROR rather than the end of the process: reads may run on
// goroutines of their own (readParallel), where nothing else would recover it.
func (dp *Plane) readOne(ctx context.Context, f *fetchRequest, r *partRead, remaining int, minOne bool) (code int16) {
	defer func() {
		if v := recover(); v != nil {
			dp.partitionPanic("fetch", f.cc, r.fp.key, v)
			code = kerr.UnknownServerError.Code
		}
	}()
	enc := encoderPool.Get().(*mapping.BatchEncoder)
	code = dp.readPartition(ctx, f, enc, r.fp, &r.ip, remaining, minOne)
	encoderPool.Put(enc) // not after a panic: its state is unknown
	return code
}

// encoderPool keeps Fetch batch encoders, whose header scratch space grows once.
var encoderPool = sync.Pool{New: func() any { return new(mapping.BatchEncoder) }}

func allFinal(parts []fetchPart) bool {
	for i := range parts {
		if !parts[i].final {
			return false
		}
	}
	return true
}

// readPartition fills in the partition's offsets and reads its records into one batch of at
// most min(partition_max_bytes, remaining) bytes, held in a pooled buffer; with minOne the
// first record is returned whatever its size. It returns the partition's Kafka code.
func (dp *Plane) readPartition(ctx context.Context, f *fetchRequest, enc *mapping.BatchEncoder, fp *fetchPart, ip *iggy.Partition, remaining int, minOne bool) int16 {
	fp.dropRecords() // what an earlier read of this request found is superseded
	if !fp.known {
		var err error
		if ip, err = dp.readOffsets(ctx, dp.storage(f.cc), fp.key, fp.st, ip); err != nil {
			code := kafkacode.ForFetch(kafkacode.ForData(err, false))
			dp.logEntry(slog.LevelWarn, logFetchRead, "fetch: offsets read failed", "conn", f.cc.ID, "topic", fp.key.Topic, "partition", fp.key.Partition, "kafka_error", code, "err", err)
			return code
		}
	}
	// The epoch is checked before the offset, as Kafka does: a consumer behind a truncation
	// learns of the new epoch and validates its position (KIP-320) instead of being told
	// its offset is out of range.
	if code := dp.epochs.validate(ctx, fp.key, fp.epoch); code != 0 {
		return code
	}
	hw := HighWatermark(ip)
	logStart, err := dp.logStartOffset(ctx, dp.storage(f.cc), fp.key, fp.st, hw)
	if err != nil {
		code := kafkacode.ForFetch(kafkacode.ForData(err, false))
		dp.warnIggy(ctx, "fetch: log start offset read failed", "conn", f.cc.ID, "topic", fp.key.Topic, "partition", fp.key.Partition, "kafka_error", code, "err", err)
		return code
	}
	logStart = fp.rules.logStartFloor(fp.out.Partition, logStart, hw)
	fp.out.ErrorCode = 0
	// The last stable offset is computed before any aborted range is looked at: a
	// transaction ending in between only moves it up, and its records lie above it.
	lso, txnState := dp.lastStable(fp.key, hw)
	fp.out.HighWatermark, fp.out.LastStableOffset, fp.out.LogStartOffset = int64(hw), int64(lso), int64(logStart)
	if fp.offset < int64(logStart) || fp.offset > int64(hw) {
		return kerr.OffsetOutOfRange.Code
	}
	end := hw
	if f.readCommitted {
		end = lso // records of open transactions wait, as Kafka's read_committed does
	} else {
		txnState = nil // read_uncommitted sees aborted records too
	}
	limit := min(fp.maxBytes, remaining)
	if fp.offset >= int64(end) || limit <= 0 {
		return 0
	}

	// One batch has one leader epoch: a read stops where the next epoch starts.
	epoch, next, hasNext := dp.epochs.at(fp.key, uint64(fp.offset))
	if hasNext {
		end = min(end, next)
	}
	r := readRange{cc: f.cc, key: fp.key, st: fp.st, from: uint64(fp.offset), hw: end, limit: limit, aborted: txnState}
	if dp.serveTail(fp, &r, minOne) {
		return 0
	}
	r.size, r.sizeKnown, r.recordSize = fp.st.recentSize(), true, fp.st.batchRecordSize()
	if r.size == 0 {
		r.size, r.sizeKnown = max(storedSize(ip), 1), false
	}
	// A pooled buffer of about what will be read (growing one as it fills would copy it
	// several times over); it goes back to the pool when the response has been written.
	perRecord := uint64(r.size + recordOverhead)
	estimate := min(uint64(limit), (hw-r.from)*perRecord, maxPollRounds*maxPollCount*perRecord)
	if buf := bufpool.Get(kbatch.HeaderSize + int(estimate)); fp.rules.logAppendTime {
		enc.BeginLogAppendTime(buf, epoch)
	} else {
		enc.Begin(buf, epoch)
	}
	drop := false
	defer func() {
		out := enc.Finish()
		if drop {
			out = out[:0]
		}
		fp.keepRecords(out)
	}()
	if code := dp.reader.read(ctx, &r, enc); code != 0 {
		return code
	}
	// Only the first non-empty partition may exceed its limit (KIP-74); this one's first
	// record waits for a fetch where it comes first.
	drop = !minOne && enc.Size() > limit
	return 0
}

// readRange is what one partition read asks for: the records of key from offset from up to
// (not including) hw, until the batch holds limit bytes.
type readRange struct {
	cc       *listener.ConnContext
	key      partKey
	st       *partState
	from, hw uint64
	limit    int
	// size is about how large a message is (payload and headers); sizeKnown tells whether it
	// was seen in this partition's recent messages or merely guessed. recordSize is about
	// what one of them takes in a Kafka batch (0: not known yet).
	size       int
	sizeKnown  bool
	recordSize int
	// aborted, for read_committed reads of a partition transactions touched, says which
	// offsets hold aborted records: they are left out (nil: none are).
	aborted *txn.Partition
}

// partitionReader reads the stored messages of a partition into a Kafka batch; iggyReader
// polls Iggy. The tail cache (tail.go) is asked first and is not a partitionReader.
type partitionReader interface {
	// read adds the records of r to enc (begun by the caller); the first record is added
	// whatever its size. It returns 0, or the Kafka code of the partition when nothing could
	// be read.
	read(ctx context.Context, r *readRange, enc *mapping.BatchEncoder) int16
}

// iggyReader reads partitions with Iggy polls, through the storage of the requesting client.
type iggyReader struct{ b *Plane }

func (ir iggyReader) read(ctx context.Context, r *readRange, enc *mapping.BatchEncoder) int16 {
	b, next, size, recordSize := ir.b, r.from, r.size, r.recordSize
	s := b.storage(r.cc)
	for round := 0; round < maxPollRounds && next < r.hw && (enc.Len() == 0 || enc.Size() < r.limit); round++ {
		if end, ok := r.abortedAt(next); ok {
			next = end // a run of aborted records is not read at all
			continue
		}
		count := pollCount(r.limit-enc.Size(), countingSize(size, recordSize), r.hw-next, r.sizeKnown || round > 0)
		sizeBefore := enc.Size()
		polled, err := pollFitting(ctx, s, r.key, r.st, iggy.PollingStrategy{Kind: iggy.PollOffset, Value: next}, count)
		if err != nil {
			if enc.Len() > 0 {
				break // answer what was read; the next fetch meets the error
			}
			code := kafkacode.ForFetch(kafkacode.ForData(err, false))
			b.warnIggy(ctx, "fetch: poll failed", "conn", r.cc.ID, "topic", r.key.Topic, "partition", r.key.Partition, "kafka_error", code, "err", err)
			return code
		}
		full, polledBytes, polledCount := false, 0, 0
		for i := range polled.Messages {
			m := &polled.Messages[i]
			if m.Offset < next {
				continue
			}
			if m.Offset >= r.hw {
				full = true // written after the offsets were read: the next fetch gets it
				break
			}
			if _, ok := r.abortedAt(m.Offset); ok {
				next = m.Offset + 1 // left out of read_committed answers (docs/TRANSACTIONS.md)
				continue
			}
			stored := mapping.Stored{Offset: m.Offset, Timestamp: m.Timestamp, OriginTimestamp: m.OriginTimestamp,
				Payload: m.Payload, Headers: m.Headers}
			added, err := enc.Add(&stored, r.limit)
			if err != nil {
				var me *mapping.MessageError
				if errors.As(err, &me) {
					b.logCorrupt(r.cc, r.key, me)
				}
				if enc.Len() == 0 {
					return kerr.UnknownServerError.Code
				}
				full = true // answer the records before it; the next fetch stops at it
				break
			}
			if !added {
				full = true
				break
			}
			next = m.Offset + 1
			polledBytes += len(m.Payload) + len(m.Headers)
			polledCount++
		}
		r.st.noteSizes(polledBytes, polledCount)
		if polledCount > 0 {
			size = r.st.messageSize(size)
			recordSize = r.st.noteRecordSize(enc.Size()-sizeBefore, polledCount)
		}
		empty := len(polled.Messages) == 0
		polled.Release() // the records hold copies of what they need
		if full || empty {
			break
		}
	}
	return 0
}

// abortedAt reports whether offset holds an aborted record a read_committed read leaves out,
// and where that run of aborted records ends.
func (r *readRange) abortedAt(offset uint64) (uint64, bool) {
	if r.aborted == nil {
		return 0, false
	}
	return r.aborted.Aborted(offset)
}

// pollFitting polls count messages of k as strategy says, and fewer when their answer would
// not fit in one Iggy frame (iggy.ErrReplyTooLarge): the partition's average sizes, which
// counts come from, can hide a run of large messages another writer appended among small
// ones. The size the refused answer declared is noted in st (nil: none), so that the
// partition's next polls are counted from it, and the poll is made again for as many
// messages as would fill half a frame at that size, an eighth of count at most; one message
// always fits.
func pollFitting(ctx context.Context, s Storage, k partKey, st *partState, strategy iggy.PollingStrategy, count uint32) (*iggy.Polled, error) {
	for {
		polled, err := s.PollMessages(ctx, k.pollRequest(strategy, count))
		var tooLarge *iggy.FrameSizeError
		if err == nil || count == 1 || !errors.As(err, &tooLarge) {
			return polled, err
		}
		if st != nil {
			st.noteSizes(int(tooLarge.Size), int(count))
		}
		fitting := uint64(count) * uint64(tooLarge.Limit/2) / max(uint64(tooLarge.Size), 1)
		count = uint32(max(min(fitting, uint64(count/8)), 1))
	}
}

// keepRecords makes the finished batch in buf (empty when nothing was read) the partition's
// records.
func (fp *fetchPart) keepRecords(buf []byte) {
	if len(buf) == 0 {
		bufpool.Put(buf)
		return
	}
	fp.out.RecordBatches, fp.buf = buf, buf
}

// countingSize is the size to count a poll's messages by, from a partition's recent stored
// message size and the size its records took in recent Kafka batches (0: none yet). A record
// is smaller than its message by the gateway's own Iggy headers, so the record size fills a
// fetch in one poll; but only the stored size rises at once when larger messages are written
// (noteSizes), so it bounds the count from below by seven eighths of it: a record size learnt
// from small records must not ask for thousands of messages that have since grown large.
func countingSize(stored, record int) int {
	return max(record, stored-stored/8)
}

// pollCount is how many messages to ask Iggy for to fill about want bytes with records of
// about size bytes, at most available. Unless the size is sure (seen in this partition's
// recent messages), the count stays small: the messages may be far larger than guessed.
//
// The count asks for an eighth more than the estimate: sizes vary, and each poll has a cost
// of its own on the Iggy server (on Iggy 0.9 a poll of 100 messages of 1 KiB costs about six
// times the server CPU per byte of a poll of 1000: docs/PERFORMANCE.md, "Polls that fill a
// fetch"), so reading a few messages past the limit, which the batch leaves out, is cheaper
// than a second poll for the last few.
func pollCount(want, size int, available uint64, sure bool) uint32 {
	fits := max(want, 0) / max(size, 1)
	n := uint64(fits + fits/8 + 1)
	limit := uint64(maxPollCount)
	if !sure {
		limit = firstPollCount
	}
	return uint32(min(n, limit, available))
}

// waitFetch waits until the partitions probably hold minBytes past their fetch offsets, wait
// has passed, or the gateway begins to shut down (BeginShutdown). Writes through this gateway
// wake it at once; native Iggy writes are noticed by the shared topic probes.
func (dp *Plane) waitFetch(ctx context.Context, f *fetchRequest, minBytes int, wait time.Duration) error {
	w := newWaiter()
	for i := range f.parts {
		if fp := &f.parts[i]; !fp.final {
			fp.st.addWaiter(w)
			defer fp.st.removeWaiter(w)
		}
	}
	for ti := range f.topics {
		if ft := &f.topics[ti]; !allFinal(f.parts[ft.start:ft.end]) {
			defer dp.watchTopic(ft.target)()
		}
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for f.available(dp) < minBytes {
		select {
		case <-w.ch:
		case <-timer.C:
			return nil
		case <-dp.draining:
			return nil // the gateway is shutting down: answer now rather than hold up the drain
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// available estimates the bytes the partitions hold past their fetch offsets, from the last
// known high watermarks and message sizes.
// read_committed counts only what lies below the last stable offset: records of open
// transactions wake nobody before their marker.
func (f *fetchRequest) available(dp *Plane) int {
	total := 0
	for i := range f.parts {
		fp := &f.parts[i]
		if fp.final {
			continue
		}
		hw := fp.st.highWatermark()
		if f.readCommitted {
			hw, _ = dp.lastStable(fp.key, hw)
		}
		if hw := int64(hw); hw > fp.offset {
			total += int(min(uint64(hw-fp.offset)*uint64(fp.st.messageSize(defaultMessageSize)), uint64(max(fp.maxBytes, 1))))
		}
	}
	return total
}
