// Package durability maps the gateway's topic flush setting onto Iggy's per-topic flush
// options and reads back what an Iggy topic's options promise for an acknowledged write.
// docs/DURABILITY.md explains the settings and what survives which crash.
package durability

import (
	"fmt"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// Mode is how the gateway creates Iggy topics (IGGY_KAFKA_TOPIC_FLUSH).
type Mode string

const (
	// Write makes every acknowledged write reach the segment file before Iggy answers
	// (messages_required_to_save = 1): it survives a crash of the Iggy process, as an
	// acknowledged Kafka write survives a broker process crash (page cache).
	Write Mode = "write"
	// Fsync also fsyncs each write (enforce_fsync): it survives a machine crash, like Kafka
	// with flush.messages=1.
	Fsync Mode = "fsync"
	// IggyDefault sends no flush options: Iggy keeps up to 1024 messages or 1 MiB per
	// partition in memory, and a process crash loses them although they were acknowledged.
	IggyDefault Mode = "iggy-default"
)

// Modes lists the modes, for settings and messages.
var Modes = []Mode{Write, Fsync, IggyDefault}

// Parse returns the mode named s.
func Parse(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown topic flush mode %q (want write, fsync or iggy-default)", s)
}

// Apply sets the flush options of mode m on o, the options of a topic to create. The zero
// Mode is Write, the default of IGGY_KAFKA_TOPIC_FLUSH.
func (m Mode) Apply(o *iggy.TopicOptions) {
	switch m {
	case Write, "":
		o.MessagesRequiredToSave = 1
		o.EnforceFsync = ptr(false)
	case Fsync:
		o.MessagesRequiredToSave = 1
		o.EnforceFsync = ptr(true)
	}
}

func ptr[T any](v T) *T { return &v }

// Iggy's defaults for topics created without flush options (core/common/src/types/options).
const (
	iggyDefaultMessages = 1024
	iggyDefaultBytes    = 1 << 20
)

// InForce is what a topic's flush options make of an acknowledged write.
type InForce struct {
	// Known is false when the server reported no flush options (not an Iggy 0.9 server).
	Known    bool
	Fsync    bool
	Messages uint32 // messages kept in Iggy's memory before a write to the segment
	Bytes    uint64 // bytes kept in Iggy's memory before a write to the segment
}

// Of reads the flush options in force on t.
func Of(t *iggy.Topic) InForce {
	o := t.InForce()
	f := InForce{
		Known:    o.EnforceFsync != nil || o.MessagesRequiredToSave != 0 || o.SizeOfMessagesRequiredToSave != 0,
		Messages: o.MessagesRequiredToSave,
		Bytes:    o.SizeOfMessagesRequiredToSave,
	}
	if o.EnforceFsync != nil {
		f.Fsync = *o.EnforceFsync
	}
	if f.Messages == 0 {
		f.Messages = iggyDefaultMessages
	}
	if f.Bytes == 0 {
		f.Bytes = iggyDefaultBytes
	}
	return f
}

// WritesEachAck reports whether every acknowledged write reaches the segment file before
// Iggy answers, so that a crash of the Iggy process loses nothing acknowledged.
func (f InForce) WritesEachAck() bool { return f.Known && f.Messages == 1 }

// Mode is the gateway mode the options correspond to; ok is false for options the gateway
// does not create (buffered in Iggy's memory: a process crash can lose acknowledged writes).
func (f InForce) Mode() (m Mode, ok bool) {
	switch {
	case !f.WritesEachAck():
		return IggyDefault, false
	case f.Fsync:
		return Fsync, true
	default:
		return Write, true
	}
}

// String describes the options for operators.
func (f InForce) String() string {
	if !f.Known {
		return "unknown (the Iggy server reports no flush options)"
	}
	if m, ok := f.Mode(); ok {
		return string(m)
	}
	fsync := "without fsync"
	if f.Fsync {
		fsync = "then fsynced"
	}
	return fmt.Sprintf("buffered: up to %d messages or %d bytes per partition in Iggy's memory before they are written (%s); an Iggy crash loses them although they were acknowledged", f.Messages, f.Bytes, fsync)
}

// Fix is the operator's way out for a topic whose options do not write each acknowledged
// write: Iggy cannot change them on an existing topic.
const Fix = "Iggy cannot change these options on an existing topic: recreate it (or copy it to a new topic) with the gateway's flush setting, see docs/DURABILITY.md"
