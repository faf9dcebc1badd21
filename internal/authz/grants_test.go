package authz

import (
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// op is one decision on stream "s", topic "t".
type op struct {
	name string
	fn   func(*Grants) bool
}

var ops = []op{
	{"ReadServers", (*Grants).ReadServers},
	{"ManageServers", (*Grants).ManageServers},
	{"ManageStream", func(g *Grants) bool { return g.ManageStream("s") }},
	{"CreateTopic", func(g *Grants) bool { return g.CreateTopic("s") }},
	{"ManageTopic", func(g *Grants) bool { return g.ManageTopic("s", "t") }},
	{"ReadTopic", func(g *Grants) bool { return g.ReadTopic("s", "t") }},
	{"Poll", func(g *Grants) bool { return g.Poll("s", "t") }},
	{"Send", func(g *Grants) bool { return g.Send("s", "t") }},
	{"Describe", func(g *Grants) bool { return g.Describe("s", "t") }},
	{"PollsAnywhere", (*Grants).PollsAnywhere},
	{"SendsAnywhere", (*Grants).SendsAnywhere},
}

func onStream(s StreamGrants) *Grants {
	return &Grants{Streams: map[string]StreamGrants{"s": s}}
}

func onTopic(t TopicGrants) *Grants {
	return onStream(StreamGrants{Topics: map[string]TopicGrants{"t": t}})
}

// TestInheritance checks every decision against each single Iggy permission flag: what the
// flag grants by Iggy's inheritance rules, and nothing more.
func TestInheritance(t *testing.T) {
	cases := []struct {
		name   string
		g      *Grants
		allows []string
	}{
		{"nil", nil, nil},
		{"none", &Grants{}, nil},
		{"global manage_servers", &Grants{Global: iggy.GlobalPermissions{ManageServers: true}}, []string{"ReadServers", "ManageServers"}},
		{"global read_servers", &Grants{Global: iggy.GlobalPermissions{ReadServers: true}}, []string{"ReadServers"}},
		{"global manage_users", &Grants{Global: iggy.GlobalPermissions{ManageUsers: true}}, nil},
		{"global manage_streams", &Grants{Global: iggy.GlobalPermissions{ManageStreams: true}},
			[]string{"ManageStream", "CreateTopic", "ManageTopic", "ReadTopic", "Poll", "Send", "Describe", "PollsAnywhere", "SendsAnywhere"}},
		{"global read_streams", &Grants{Global: iggy.GlobalPermissions{ReadStreams: true}}, []string{"ReadTopic", "Poll", "Describe", "PollsAnywhere"}},
		{"global manage_topics", &Grants{Global: iggy.GlobalPermissions{ManageTopics: true}},
			[]string{"CreateTopic", "ManageTopic", "ReadTopic", "Poll", "Send", "Describe", "PollsAnywhere", "SendsAnywhere"}},
		{"global read_topics", &Grants{Global: iggy.GlobalPermissions{ReadTopics: true}}, []string{"ReadTopic", "Poll", "Describe", "PollsAnywhere"}},
		{"global poll", &Grants{Global: iggy.GlobalPermissions{PollMessages: true}}, []string{"Poll", "Describe", "PollsAnywhere"}},
		{"global send", &Grants{Global: iggy.GlobalPermissions{SendMessages: true}}, []string{"Send", "Describe", "SendsAnywhere"}},
		{"stream manage_stream", onStream(StreamGrants{ManageStream: true}),
			[]string{"ManageStream", "CreateTopic", "ManageTopic", "ReadTopic", "Poll", "Send", "Describe", "PollsAnywhere", "SendsAnywhere"}},
		{"stream read_stream", onStream(StreamGrants{ReadStream: true}), []string{"ReadTopic", "Poll", "Describe", "PollsAnywhere"}},
		{"stream manage_topics", onStream(StreamGrants{ManageTopics: true}),
			[]string{"CreateTopic", "ManageTopic", "ReadTopic", "Poll", "Send", "Describe", "PollsAnywhere", "SendsAnywhere"}},
		{"stream read_topics", onStream(StreamGrants{ReadTopics: true}), []string{"ReadTopic", "Poll", "Describe", "PollsAnywhere"}},
		{"stream poll", onStream(StreamGrants{PollMessages: true}), []string{"Poll", "Describe", "PollsAnywhere"}},
		{"stream send", onStream(StreamGrants{SendMessages: true}), []string{"Send", "Describe", "SendsAnywhere"}},
		{"topic manage_topic", onTopic(TopicGrants{ManageTopic: true}),
			[]string{"ManageTopic", "ReadTopic", "Poll", "Send", "Describe", "PollsAnywhere", "SendsAnywhere"}},
		{"topic read_topic", onTopic(TopicGrants{ReadTopic: true}), []string{"ReadTopic", "Poll", "Describe", "PollsAnywhere"}},
		{"topic poll", onTopic(TopicGrants{PollMessages: true}), []string{"Poll", "Describe", "PollsAnywhere"}},
		{"topic send", onTopic(TopicGrants{SendMessages: true}), []string{"Send", "Describe", "SendsAnywhere"}},
	}
	for _, c := range cases {
		want := map[string]bool{}
		for _, a := range c.allows {
			want[a] = true
		}
		for _, o := range ops {
			if got := o.fn(c.g); got != want[o.name] {
				t.Errorf("%s: %s = %v, want %v", c.name, o.name, got, want[o.name])
			}
		}
	}
}

// TestScope checks that stream and topic grants stay on their stream and topic.
func TestScope(t *testing.T) {
	g := &Grants{Streams: map[string]StreamGrants{
		"a": {ManageStream: true},
		"b": {Topics: map[string]TopicGrants{"t1": {ManageTopic: true}}},
	}}
	checks := []struct {
		name string
		got  bool
		want bool
	}{
		{"send a/x", g.Send("a", "x"), true},
		{"send b/t1", g.Send("b", "t1"), true},
		{"send b/t2", g.Send("b", "t2"), false},
		{"poll c/t1", g.Poll("c", "t1"), false},
		{"create in b", g.CreateTopic("b"), false},
		{"manage b/t1", g.ManageTopic("b", "t1"), true},
		{"manage stream b", g.ManageStream("b"), false},
		{"describe c/x", g.Describe("c", "x"), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}
