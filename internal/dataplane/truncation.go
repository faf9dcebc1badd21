package dataplane

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// Truncation detection (docs/DATA-PATH.md, "Truncation and leader epochs"). Iggy may lose the
// unflushed tail of a partition when its process dies, and hands the lost offsets to new
// records after the restart. The gateway notices when a partition's log end is found below
// the high watermark it had seen or written: on every read of a partition's offsets, and
// right after the Iggy client reconnects (IggyReconnected), for every partition it keeps
// state for.

// LoadEpochs reads the leader-epoch log (Options.Epochs), so that Metadata, Fetch and
// OffsetsForLeaderEpoch answer with the epochs recorded before this start.
func (dp *Plane) LoadEpochs(ctx context.Context) error { return dp.epochs.refresh(ctx) }

// readOffsets applies offsets ip of k that a request read from Iggy and returns the offsets
// to answer with. A high watermark below the known one is confirmed with a fresh read; a
// confirmed drop is a truncation (truncated).
func (dp *Plane) readOffsets(ctx context.Context, s Storage, k partKey, st *partState, ip *iggy.Partition) (*iggy.Partition, error) {
	if !st.observe(ip) {
		return ip, nil
	}
	known := st.highWatermark() // a write confirmed before the fresh read is in what it sees
	topic, err := s.GetTopic(ctx, iggy.Name(k.Stream), iggy.Name(k.Topic))
	if err != nil {
		return nil, err
	}
	fresh, ok := PartitionOf(topic, int32(k.Partition))
	if !ok {
		return nil, kerr.UnknownTopicOrPartition
	}
	if from, to, truncated := st.confirmDrop(fresh, known); truncated {
		dp.truncated(ctx, k, from, to)
	}
	return fresh, nil
}

// truncated handles a detected truncation of k from log end from back to to: an error log,
// the metrics hook, a new leader epoch starting at to, and the tail cache forgetting the
// partition (its batches may hold offsets Iggy has handed to other records since).
func (dp *Plane) truncated(ctx context.Context, k partKey, from, to uint64) {
	dp.tail.Invalidate(tailKey(k))
	if dp.onTruncation != nil {
		dp.onTruncation()
	}
	epoch, recorded, err := dp.epochs.bump(ctx, k, from, to, time.Now())
	args := []any{"iggy_stream", k.Stream, "iggy_topic", k.Topic, "partition", k.Partition,
		"old_end", from, "new_end", to, "lost_records", from - to, "leader_epoch", epoch}
	switch {
	case err != nil:
		dp.log.Error("partition log truncated: Iggy lost records the gateway had seen; the new leader epoch could not be stored, so other gateways and the next start do not know it",
			append(args, "err", err)...)
	case recorded:
		dp.log.Error("partition log truncated: Iggy lost records the gateway had seen; leader epoch bumped so that consumers validating their position move back to where the log diverged", args...)
	default:
		dp.log.Error("partition log truncated: Iggy lost records the gateway had seen; another gateway already bumped the leader epoch", args...)
	}
}

// NoteCommittedPastEnd logs committed offsets beyond the known end of their partition (left
// by a truncation), once per partition and end. They are answered as stored, as Kafka does:
// a consumer starting there validates the position with its leader epoch
// (OffsetForLeaderEpoch) or gets OFFSET_OUT_OF_RANGE and applies auto.offset.reset.
func (dp *Plane) NoteCommittedPastEnd(group string, found []offsets.TopicOffsets) {
	if dp.bridgeOff() {
		return
	}
	m := dp.topics.Map()
	for _, t := range found {
		target := m.Resolve(t.Topic)
		for _, p := range t.Partitions {
			if p.Offset < 0 || p.Partition < 0 {
				continue
			}
			k := partKey{Target: target, Partition: uint32(p.Partition)}
			if hw, first := dp.data.committedPastEnd(k, uint64(p.Offset)); first {
				dp.log.Warn("committed offset is past the end of its partition (the log was truncated); answered as stored, the consumer validates it with its leader epoch or applies auto.offset.reset",
					"group", group, "topic", t.Topic, "partition", p.Partition, "committed", p.Offset, "log_end", hw, "leader_epoch", dp.epochs.current(k))
			}
		}
	}
}

// reconnectCheckTimeout bounds the offset read of one topic in a reconnect check.
const reconnectCheckTimeout = 5 * time.Second

// truncationCheck runs the checks that follow Iggy reconnects, one at a time; reconnects
// during a check ask for one more.
type truncationCheck struct {
	mu      sync.Mutex
	running bool
	again   bool
	stopped bool
	wg      sync.WaitGroup
}

// IggyReconnected is the Iggy client's reconnect hook (iggy.Config.OnReconnect): Iggy may
// have restarted and lost tails, so the offsets of every partition the gateway keeps state
// for are read again, in the background.
func (dp *Plane) IggyReconnected() {
	c := &dp.truncCheck
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.stopped || dp.bridgeOff():
	case c.running:
		c.again = true
	default:
		// Writes confirmed from now on went to the restarted Iggy: only they can start where
		// a truncated log continues (partState.confirmDrop).
		dp.data.forgetWrites()
		c.running = true
		c.wg.Go(dp.runTruncationChecks)
	}
}

func (dp *Plane) runTruncationChecks() {
	c := &dp.truncCheck
	for {
		dp.checkKnownPartitions()
		c.mu.Lock()
		if !c.again || c.stopped {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.again = false
		c.mu.Unlock()
	}
}

// StopTruncationChecks makes reconnects start no more checks and waits for a running one.
// Call it when shutting down, before the Iggy client is closed.
func (dp *Plane) StopTruncationChecks() {
	c := &dp.truncCheck
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.wg.Wait()
}

// checkKnownPartitions reads the offsets of every topic the gateway keeps partition state
// for and applies them (readOffsets), which detects truncations.
func (dp *Plane) checkKnownPartitions() {
	d := &dp.data
	d.mu.Lock()
	known := make(map[topicmap.Target][]partKey)
	for k := range d.parts {
		known[k.Target] = append(known[k.Target], k)
	}
	d.mu.Unlock()
	for t, keys := range known {
		dp.checkTopic(t, keys)
	}
}

// checkTopic reads one topic's offsets for a reconnect check and applies them to its known
// partitions. A panic is recovered, logged with its stack and counted (internal/supervise,
// component "truncation_check"): the other topics are checked, and later reconnects start
// checks again.
func (dp *Plane) checkTopic(t topicmap.Target, keys []partKey) {
	defer supervise.Recover(dp.log, "truncation_check", nil)
	s := dp.storage(nil)
	ctx, cancel := context.WithTimeout(context.Background(), reconnectCheckTimeout)
	defer cancel()
	topic, err := s.GetTopic(ctx, iggy.Name(t.Stream), iggy.Name(t.Topic))
	if err != nil {
		return
	}
	dp.noteTopicOf(t, topic)
	for _, k := range keys {
		if ip, ok := PartitionOf(topic, int32(k.Partition)); ok {
			_, _ = dp.readOffsets(ctx, s, k, dp.data.part(k), ip)
		}
	}
}

// committedPastEnd reports whether committed lies past k's known high watermark (state the
// gateway keeps; none is created here), and whether that is the first report for k at this
// high watermark.
func (d *partitions) committedPastEnd(k partKey, committed uint64) (hw uint64, first bool) {
	d.mu.Lock()
	st := d.parts[k]
	d.mu.Unlock()
	if st == nil {
		return 0, false
	}
	if hw = st.highWatermark(); committed <= hw {
		return hw, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if logged, ok := d.pastEnd[k]; ok && logged == hw {
		return hw, false
	}
	if d.pastEnd == nil || len(d.pastEnd) >= corruptLogLimit {
		d.pastEnd = make(map[partKey]uint64)
	}
	d.pastEnd[k] = hw
	return hw, true
}

// forgetWrites makes every partition's state forget the writes confirmed so far.
func (d *partitions) forgetWrites() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, st := range d.parts {
		st.mu.Lock()
		st.wrote = false
		st.mu.Unlock()
	}
}
