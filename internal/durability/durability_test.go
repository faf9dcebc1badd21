package durability

import (
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

func TestModesRoundTripThroughTopicOptions(t *testing.T) {
	tests := []struct {
		mode      Mode
		wantMode  Mode
		writesAck bool
	}{
		{Write, Write, true},
		{Fsync, Fsync, true},
		{IggyDefault, IggyDefault, false},
	}
	for _, tt := range tests {
		m, err := Parse(string(tt.mode))
		if err != nil {
			t.Fatal(err)
		}
		var o iggy.TopicOptions
		m.Apply(&o)
		// What a 0.9 server reports: the options given, and its defaults for the others.
		topic := &iggy.Topic{Options: o, DerivedOptions: iggy.TopicOptions{
			EnforceFsync: ptr(false), MessagesRequiredToSave: 1024, SizeOfMessagesRequiredToSave: 1 << 20}}
		f := Of(topic)
		got, ok := f.Mode()
		if got != tt.wantMode || ok != tt.writesAck || f.WritesEachAck() != tt.writesAck {
			t.Errorf("%s: in force %+v, mode %s %v", tt.mode, f, got, ok)
		}
	}
	if _, err := Parse("always"); err == nil {
		t.Error("unknown mode parsed")
	}
	if f := Of(&iggy.Topic{}); f.Known || f.WritesEachAck() {
		t.Errorf("no reported options: %+v", f)
	}
}
