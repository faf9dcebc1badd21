package wire

import (
	"encoding/binary"
	"unicode/utf8"
)

// An options block uses the user-headers TLV encoding with string keys. In request bodies it
// has no length prefix and runs to the end of the body; in responses it is prefixed with
// [len:u32].

// Limits of an options block.
const (
	MaxOptions      = 1024
	MaxOptionsBytes = 100_000
)

// Topic option keys.
const (
	OptionCompression                  = "compression_algorithm"
	OptionMessageExpiry                = "message_expiry"
	OptionMaxTopicSize                 = "max_topic_size"
	OptionSegmentSize                  = "segment_size"
	OptionEnforceFsync                 = "enforce_fsync"
	OptionMessagesRequiredToSave       = "messages_required_to_save"
	OptionSizeOfMessagesRequiredToSave = "size_of_messages_required_to_save"
	OptionPreallocateSegments          = "preallocate_segments"
)

// Compression algorithm codes of TopicHeader.
const (
	CompressionNone uint8 = 1
	CompressionGzip uint8 = 2
)

// AppendOption appends one option with a string key.
func AppendOption(dst []byte, key string, valueKind uint8, value []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(append(dst, HeaderString), uint32(len(key)))
	dst = append(dst, key...)
	return appendHeaderField(dst, valueKind, value)
}

// AppendTopicOptions appends the options block of CreateTopic/UpdateTopic for o, leaving out
// zero (server default / unchanged) values as the official SDKs do.
func AppendTopicOptions(dst []byte, o TopicOptions) []byte {
	var v [8]byte
	if o.Compression != "" {
		dst = AppendOption(dst, OptionCompression, HeaderString, []byte(o.Compression))
	}
	if o.MessageExpiry != 0 {
		binary.LittleEndian.PutUint64(v[:], o.MessageExpiry)
		dst = AppendOption(dst, OptionMessageExpiry, HeaderUint64, v[:])
	}
	if o.MaxTopicSize != 0 {
		binary.LittleEndian.PutUint64(v[:], o.MaxTopicSize)
		dst = AppendOption(dst, OptionMaxTopicSize, HeaderUint64, v[:])
	}
	if o.EnforceFsync != nil {
		b := byte(0)
		if *o.EnforceFsync {
			b = 1
		}
		dst = AppendOption(dst, OptionEnforceFsync, HeaderBool, []byte{b})
	}
	if o.MessagesRequiredToSave != 0 {
		binary.LittleEndian.PutUint32(v[:4], o.MessagesRequiredToSave)
		dst = AppendOption(dst, OptionMessagesRequiredToSave, HeaderUint32, v[:4])
	}
	if o.SizeOfMessagesRequiredToSave != 0 {
		binary.LittleEndian.PutUint64(v[:], o.SizeOfMessagesRequiredToSave)
		dst = AppendOption(dst, OptionSizeOfMessagesRequiredToSave, HeaderUint64, v[:])
	}
	return dst
}

// Ceilings of the flush thresholds (core/common/src/types/options/mod.rs,
// MAX_MESSAGES_REQUIRED_TO_SAVE and MAX_SIZE_OF_MESSAGES_REQUIRED_TO_SAVE): a threshold a
// segment can never reach would keep every message in memory until the segment rotates.
const (
	MaxMessagesRequiredToSave       = 16 << 20
	MaxSizeOfMessagesRequiredToSave = 1 << 30
)

// ParseOptions validates an options block (size, entry count, UTF-8 string keys, no duplicate
// keys) and then calls fn for each option, stopping at the first error fn returns.
func ParseOptions(block []byte, fn func(key string, valueKind uint8, value []byte) error) error {
	if len(block) > MaxOptionsBytes {
		return formatErr(codeOptionsBlockTooLarge, "options block of %d bytes exceeds %d", len(block), MaxOptionsBytes)
	}
	type option struct {
		key   string
		kind  uint8
		value []byte
	}
	var opts []option
	var bad error
	err := ParseHeaders(block, func(kk uint8, key []byte, vk uint8, value []byte) bool {
		switch {
		case kk != HeaderString || !utf8.Valid(key):
			bad = formatErr(codeInvalidFormat, "option keys must be UTF-8 strings")
		case len(opts) == MaxOptions:
			bad = formatErr(codeOptionsBlockTooLarge, "options block has more than %d entries", MaxOptions)
		default:
			opts = append(opts, option{string(key), vk, value})
		}
		return bad == nil
	})
	if err != nil {
		return err
	}
	if bad != nil {
		return bad
	}
	for i := range opts {
		for j := range i {
			if opts[i].key == opts[j].key {
				return formatErr(codeInvalidFormat, "duplicate option key %q", truncateKey(opts[i].key))
			}
		}
	}
	for _, o := range opts {
		if err := fn(o.key, o.kind, o.value); err != nil {
			return err
		}
	}
	return nil
}

// DecodeTopicOptions decodes the options block of CreateTopic (create = true) or UpdateTopic.
// Unknown keys are rejected with 4041 and bad values with 4042, as the server does: the 0.9
// server refuses the "durability" and "consumer_offset_durability" keys that the official
// Python SDK 0.9.0 sends on every CreateTopic. Segment size and preallocation are validated and
// otherwise ignored: they tune storage the codec's users do not model. Expiry and size accept
// the Uint64 kind and the strings "none", "unlimited" and "server_default"; human durations such
// as "7 days" are rejected.
func DecodeTopicOptions(block []byte, create bool) (TopicOptions, error) {
	var o TopicOptions
	err := ParseOptions(block, func(key string, kind uint8, v []byte) error {
		return o.absorb(key, kind, v, create)
	})
	return o, err
}

// DecodeReportedTopicOptions decodes an options block of a TopicHeader (explicit or derived),
// skipping entries it cannot interpret, as the server reads a committed block
// (TopicCreateOptions::parse_committed): a key a newer server adds must not hide the others.
func DecodeReportedTopicOptions(block []byte) TopicOptions {
	var o TopicOptions
	_ = ParseOptions(block, func(key string, kind uint8, v []byte) error {
		_ = o.absorb(key, kind, v, true)
		return nil
	})
	return o
}

// absorb sets the option key to v, leaving o unchanged when the key or value is refused.
func (o *TopicOptions) absorb(key string, kind uint8, v []byte, create bool) error {
	bad := func() error { return formatErr(codeInvalidOptionValue, "invalid value for option %q", key) }
	switch key {
	case OptionCompression:
		s := string(v)
		if kind != HeaderString || (s != "none" && s != "gzip") {
			return bad()
		}
		o.Compression = s
		return nil
	case OptionMessageExpiry, OptionMaxTopicSize:
		n, ok := optionU64(kind, v)
		if !ok {
			return bad()
		}
		if key == OptionMessageExpiry {
			o.MessageExpiry = n
		} else {
			o.MaxTopicSize = n
		}
		return nil
	}
	if !create {
		return formatErr(codeUnsupportedOptionKey, "option %q cannot be updated", key)
	}
	switch key {
	case OptionSegmentSize:
		if kind != HeaderUint64 || len(v) != 8 {
			return bad()
		}
	case OptionSizeOfMessagesRequiredToSave:
		if kind != HeaderUint64 || len(v) != 8 || binary.LittleEndian.Uint64(v) > MaxSizeOfMessagesRequiredToSave {
			return bad()
		}
		o.SizeOfMessagesRequiredToSave = binary.LittleEndian.Uint64(v)
	case OptionMessagesRequiredToSave:
		if kind != HeaderUint32 || len(v) != 4 {
			return bad()
		}
		n := binary.LittleEndian.Uint32(v)
		if n == 0 || n > MaxMessagesRequiredToSave {
			return bad()
		}
		o.MessagesRequiredToSave = n
	case OptionEnforceFsync, OptionPreallocateSegments:
		if kind != HeaderBool || len(v) != 1 || v[0] > 1 {
			return bad()
		}
		if key == OptionEnforceFsync {
			on := v[0] == 1
			o.EnforceFsync = &on
		}
	default:
		return formatErr(codeUnsupportedOptionKey, "unsupported option %q", truncateKey(key))
	}
	return nil
}

func optionU64(kind uint8, v []byte) (uint64, bool) {
	switch {
	case kind == HeaderUint64 && len(v) == 8:
		return binary.LittleEndian.Uint64(v), true
	case kind == HeaderString:
		switch string(v) {
		case "server_default":
			return 0, true
		case "none", "unlimited", "never_expire":
			return Never, true
		}
	}
	return 0, false
}

func truncateKey(k string) string {
	if len(k) > 64 {
		return k[:64]
	}
	return k
}

// CompressionCode returns the TopicHeader code of a compression name ("" and "none" → 1).
func CompressionCode(name string) uint8 {
	if name == "gzip" {
		return CompressionGzip
	}
	return CompressionNone
}

// CompressionName returns the option name of a TopicHeader compression code.
func CompressionName(code uint8) string {
	if code == CompressionGzip {
		return "gzip"
	}
	return "none"
}
