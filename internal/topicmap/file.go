package topicmap

import (
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// fileFormat is the TOML topic map document:
//
//	default_stream = "kafka"
//	[topics.orders]
//	stream = "billing"
//	topic = "orders_v2"      # optional, defaults to the Kafka name
type fileFormat struct {
	DefaultStream *string              `toml:"default_stream"`
	Topics        map[string]fileTopic `toml:"topics"`
}

type fileTopic struct {
	Stream string `toml:"stream"`
	Topic  string `toml:"topic"`
}

// Load reads a TOML topic map file. The file is a complete document: default_stream is
// required and wins over any other default. Unknown keys are errors, so a typo cannot silently
// send a topic to the wrong stream.
func Load(path string) (*Map, error) {
	var f fileFormat
	md, err := toml.DecodeFile(path, &f)
	if err != nil {
		return nil, fmt.Errorf("topic map %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		slices.Sort(keys)
		return nil, fmt.Errorf("topic map %s: unknown keys: %s", path, strings.Join(keys, ", "))
	}
	if f.DefaultStream == nil {
		return nil, fmt.Errorf("topic map %s: default_stream is required", path)
	}
	overrides := make(map[string]Target, len(f.Topics))
	for name, t := range f.Topics {
		if t.Stream == "" {
			return nil, fmt.Errorf("topic map %s: topics.%q: stream is required", path, name)
		}
		overrides[name] = Target(t)
	}
	m, err := New(*f.DefaultStream, overrides)
	if err != nil {
		return nil, fmt.Errorf("topic map %s: %w", path, err)
	}
	return m, nil
}
