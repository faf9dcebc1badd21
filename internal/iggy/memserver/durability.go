package memserver

import "github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"

// The real Iggy 0.9 server keeps a partition's appended messages in an in-memory journal and
// writes them to the segment file only when the journal holds messages_required_to_save
// messages or size_of_messages_required_to_save bytes (or the segment is full), before it
// answers the SendMessages that tripped the threshold; with enforce_fsync the write is
// followed by fdatasync. The journal does not survive a crash. (core/partitions/src/
// iggy_partition.rs: commit_messages_inner, called from commit_partition_entry before the
// reply; messages_writer.rs: save_frozen_batches.) This file models those rules so that Crash
// can drop exactly what a crashed server would lose; docs/DURABILITY.md explains them.

// Server defaults of the flush options (core/common/src/types/options/mod.rs).
const (
	defaultMessagesRequiredToSave       = 1024
	defaultSizeOfMessagesRequiredToSave = 1 << 20
)

// flushRules are a topic's resolved flush options.
type flushRules struct {
	fsync    bool
	messages uint32
	bytes    uint64
}

// resolveFlush resolves the flush options a CreateTopic gave against the server defaults.
func resolveFlush(o wire.TopicOptions) flushRules {
	r := flushRules{messages: defaultMessagesRequiredToSave, bytes: defaultSizeOfMessagesRequiredToSave}
	if o.EnforceFsync != nil {
		r.fsync = *o.EnforceFsync
	}
	if o.MessagesRequiredToSave != 0 {
		r.messages = o.MessagesRequiredToSave
	}
	if o.SizeOfMessagesRequiredToSave != 0 {
		r.bytes = o.SizeOfMessagesRequiredToSave
	}
	return r
}

// derivedFlush is the derived options block for the flush options the topic was not created
// with: the values the server resolved for them, as the real server reports them.
func derivedFlush(explicit wire.TopicOptions, r flushRules) wire.TopicOptions {
	var d wire.TopicOptions
	if explicit.EnforceFsync == nil {
		d.EnforceFsync = &r.fsync
	}
	if explicit.MessagesRequiredToSave == 0 {
		d.MessagesRequiredToSave = r.messages
	}
	if explicit.SizeOfMessagesRequiredToSave == 0 {
		d.SizeOfMessagesRequiredToSave = r.bytes
	}
	return d
}

// explicitFlush keeps the flush options of a CreateTopic's options (the explicit block).
func explicitFlush(o wire.TopicOptions) wire.TopicOptions {
	return wire.TopicOptions{
		EnforceFsync:                 o.EnforceFsync,
		MessagesRequiredToSave:       o.MessagesRequiredToSave,
		SizeOfMessagesRequiredToSave: o.SizeOfMessagesRequiredToSave,
	}
}

// persisted is how much of a partition's log has reached a given durability level: the
// number of messages (also the offset of the first message not included) and their bytes.
type persisted struct {
	messages uint64
	bytes    uint64
}

// persistAfterAppend applies the flush rules after an append: once the unsaved messages
// reach either threshold, all of them are written to the segment (and fsynced with fsync).
func (p *partition) persistAfterAppend(r flushRules) {
	unsavedMessages := p.next - p.written.messages
	unsavedBytes := p.sizeBytes - p.written.bytes
	if unsavedMessages < uint64(r.messages) && unsavedBytes < r.bytes {
		return
	}
	p.written = persisted{messages: p.next, bytes: p.sizeBytes}
	if r.fsync {
		p.synced = p.written
	}
}

// CrashKind says what a simulated crash loses.
type CrashKind int

const (
	// ProcessCrash is the Iggy process dying (SIGKILL, OOM kill, panic): the in-memory
	// journals are lost, what was written to segment files survives in the page cache.
	ProcessCrash CrashKind = iota
	// MachineCrash is a power loss or kernel crash: only what was fsynced survives. Writes
	// that were not fsynced are assumed lost (the worst case; the kernel may have written
	// some of them back).
	MachineCrash
)

func (k CrashKind) String() string {
	if k == MachineCrash {
		return "machine crash"
	}
	return "process crash"
}

// crashLocked truncates every partition to what survives a crash of kind k, as the real
// server finds its segments at the next start, and clamps consumer offsets to the new last
// offset as the real server does when it loads them (core/server/src/partition_helpers.rs:
// configure_consumer_offsets). It returns how many messages were lost.
func (s *state) crashLocked(k CrashKind) (lost uint64) {
	s.streams.each(func(_ uint32, st *stream) {
		st.topics.each(func(_ uint32, t *topic) {
			for _, p := range t.partitions {
				keep := p.written
				if k == MachineCrash {
					keep = p.synced
					if !t.settings.flush.fsync {
						// Offsets are written with the topic's enforce_fsync.
						clear(p.consumerOffsets)
						clear(p.groupOffsets)
					}
				}
				lost += p.truncate(keep)
			}
		})
	})
	return lost
}

// truncate drops every message at or after keep (a batch boundary: flushes write whole
// journals) and returns how many it dropped.
func (p *partition) truncate(keep persisted) uint64 {
	lost := p.next - keep.messages
	i := len(p.batches)
	for i > 0 && p.batches[i-1].baseOffset >= keep.messages {
		i--
	}
	clear(p.batches[i:])
	p.batches = p.batches[:i]
	p.next, p.sizeBytes = keep.messages, keep.bytes
	p.written = keep
	if p.synced.messages > keep.messages {
		p.synced = keep
	}
	last := p.currentOffset()
	for id, o := range p.consumerOffsets {
		p.consumerOffsets[id] = min(o, last)
	}
	for id, o := range p.groupOffsets {
		p.groupOffsets[id] = min(o, last)
	}
	return lost
}
