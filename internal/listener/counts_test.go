package listener

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A negative count where the field is not nullable is refused, as Kafka refuses it; the
// null counts of nullable fields and the librdkafka Metadata quirk are not.
func TestNegativeCountsRefused(t *testing.T) {
	minus1 := binary.BigEndian.AppendUint32(nil, 0xffffffff)
	minus5 := binary.BigEndian.AppendUint32(nil, 0xfffffffb)
	for _, tc := range []struct {
		name    string
		key     kmsg.Key
		version int16
		body    []byte
		refused bool
	}{
		{"DescribeConfigs v1 resources -1", kmsg.DescribeConfigs, 1, append(minus1, 0), true},
		{"DescribeConfigs v1 resources 0", kmsg.DescribeConfigs, 1, append(binary.BigEndian.AppendUint32(nil, 0), 0), false},
		{"DescribeConfigs v4 resources null (compact)", kmsg.DescribeConfigs, 4, []byte{0, 0, 0, 0}, true},
		{"DescribeConfigs v4 resources empty (compact)", kmsg.DescribeConfigs, 4, []byte{1, 0, 0, 0}, false},
		{"DescribeGroups v0 groups -1", kmsg.DescribeGroups, 0, minus1, true},
		{"ListOffsets v1 topics -5", kmsg.ListOffsets, 1, append(binary.BigEndian.AppendUint32(nil, 1), minus5...), true},
		{"Metadata v0 topics -1 (not nullable)", kmsg.Metadata, 0, minus1, true},
		{"Metadata v1 topics null", kmsg.Metadata, 1, minus1, false},
		{"Metadata v9 null topics with librdkafka's 3 extra bytes", kmsg.Metadata, 9, []byte{0, 0, 0, 0, 0, 0, 0}, false},
		// A boolean sent as 2 decodes as true and encodes back as 1: a harmless spelling.
		{"Metadata v4 auto-create sent as 2", kmsg.Metadata, 4, append(minus1, 2), false},
	} {
		req := kmsg.RequestForKey(tc.key.Int16())
		req.SetVersion(tc.version)
		err := decodeBody(req, tc.body)
		if got := errors.Is(err, errNegativeCount); got != tc.refused {
			t.Errorf("%s: %v, want refused %v", tc.name, err, tc.refused)
		}
	}
}

// Whatever body decodeBody accepts encodes back to its own bytes (up to the tolerated
// librdkafka bytes), or differs first where no count could have been negative, so no count
// was read as something the client did not send.
func FuzzDecodeBodyCounts(f *testing.F) {
	for _, k := range []kmsg.Key{kmsg.Metadata, kmsg.DescribeConfigs, kmsg.DescribeGroups, kmsg.ListOffsets, kmsg.OffsetFetch, kmsg.CreateTopics, kmsg.DeleteTopics} {
		for v := int16(0); v <= kmsg.RequestForKey(k.Int16()).MaxVersion(); v++ {
			req := kmsg.RequestForKey(k.Int16())
			req.SetVersion(v)
			f.Add(k.Int16(), v, req.AppendTo(nil))
		}
	}
	f.Fuzz(func(t *testing.T, key, version int16, body []byte) {
		req := kmsg.RequestForKey(key)
		if req == nil || key == kmsg.Produce.Int16() || version < 0 || version > req.MaxVersion() {
			return
		}
		req.SetVersion(version)
		if decodeBody(req, body) != nil {
			return
		}
		enc := req.AppendTo(nil)
		if n := min(len(enc), len(body)); string(enc[:n]) != string(body[:n]) && negativeCountAt(body, enc, firstDifference(body, enc)) {
			t.Fatalf("%s v%d accepted a body with a negative count", kmsg.NameForKey(key), version)
		}
	})
}
