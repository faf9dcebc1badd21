package authz

import (
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// Grants is one user's Iggy permissions, addressed by stream and topic name. The zero value
// (and a nil *Grants) grants nothing.
type Grants struct {
	User    string
	Global  iggy.GlobalPermissions
	Streams map[string]StreamGrants // by Iggy stream name
	// Read is when the permissions were read from Iggy.
	Read time.Time
}

// StreamGrants are a user's permissions on one stream and its topics.
type StreamGrants struct {
	ManageStream, ReadStream, ManageTopics, ReadTopics, PollMessages, SendMessages bool
	Topics                                                                         map[string]TopicGrants // by Iggy topic name
}

// TopicGrants are a user's permissions on one topic.
type TopicGrants struct {
	ManageTopic, ReadTopic, PollMessages, SendMessages bool
}

func (g *Grants) global() iggy.GlobalPermissions {
	if g == nil {
		return iggy.GlobalPermissions{}
	}
	return g.Global
}

func (g *Grants) stream(name string) (StreamGrants, bool) {
	if g == nil {
		return StreamGrants{}, false
	}
	s, ok := g.Streams[name]
	return s, ok
}

func (g *Grants) topic(stream, topic string) TopicGrants {
	s, _ := g.stream(stream)
	return s.Topics[topic]
}

// ReadServers: server-wide reads (broker configurations, cluster description).
func (g *Grants) ReadServers() bool {
	gl := g.global()
	return gl.ManageServers || gl.ReadServers
}

// ManageServers: server-wide changes (broker configurations).
func (g *Grants) ManageServers() bool { return g.global().ManageServers }

// ManageStream: changing or deleting the stream itself.
func (g *Grants) ManageStream(stream string) bool {
	if g.global().ManageStreams {
		return true
	}
	s, _ := g.stream(stream)
	return s.ManageStream
}

// CreateTopic: creating topics in the stream.
func (g *Grants) CreateTopic(stream string) bool {
	if gl := g.global(); gl.ManageStreams || gl.ManageTopics {
		return true
	}
	s, _ := g.stream(stream)
	return s.ManageStream || s.ManageTopics
}

// ManageTopic: changing, deleting or adding partitions to the topic.
func (g *Grants) ManageTopic(stream, topic string) bool {
	return g.CreateTopic(stream) || g.topic(stream, topic).ManageTopic
}

// ReadTopic: reading the topic's description.
func (g *Grants) ReadTopic(stream, topic string) bool {
	if gl := g.global(); gl.ReadStreams || gl.ManageStreams || gl.ManageTopics || gl.ReadTopics {
		return true
	}
	s, _ := g.stream(stream)
	if s.ManageStream || s.ReadStream || s.ManageTopics || s.ReadTopics {
		return true
	}
	t := s.Topics[topic]
	return t.ManageTopic || t.ReadTopic
}

// Poll: reading the topic's messages.
func (g *Grants) Poll(stream, topic string) bool {
	if gl := g.global(); gl.PollMessages || gl.ReadTopics || gl.ManageTopics || gl.ReadStreams || gl.ManageStreams {
		return true
	}
	s, _ := g.stream(stream)
	if s.ManageStream || s.ReadStream || s.ManageTopics || s.ReadTopics || s.PollMessages {
		return true
	}
	t := s.Topics[topic]
	return t.ManageTopic || t.ReadTopic || t.PollMessages
}

// Send: appending messages to the topic.
func (g *Grants) Send(stream, topic string) bool {
	if gl := g.global(); gl.SendMessages || gl.ManageStreams || gl.ManageTopics {
		return true
	}
	s, _ := g.stream(stream)
	if s.ManageStream || s.ManageTopics || s.SendMessages {
		return true
	}
	t := s.Topics[topic]
	return t.ManageTopic || t.SendMessages
}

// Describe: seeing that the topic exists (Kafka's DESCRIBE, implied by every other topic
// operation): any read, poll, send or manage permission on it.
func (g *Grants) Describe(stream, topic string) bool {
	return g.ReadTopic(stream, topic) || g.Poll(stream, topic) || g.Send(stream, topic) || g.ManageTopic(stream, topic)
}

// PollsAnywhere reports whether the user may poll some topic: global poll, or poll on any
// stream or topic. It is the precondition of every consumer group operation.
func (g *Grants) PollsAnywhere() bool {
	if g == nil {
		return false
	}
	if gl := g.Global; gl.PollMessages || gl.ReadTopics || gl.ManageTopics || gl.ReadStreams || gl.ManageStreams {
		return true
	}
	for _, s := range g.Streams {
		if s.ManageStream || s.ReadStream || s.ManageTopics || s.ReadTopics || s.PollMessages {
			return true
		}
		for _, t := range s.Topics {
			if t.ManageTopic || t.ReadTopic || t.PollMessages {
				return true
			}
		}
	}
	return false
}

// SendsAnywhere reports whether the user may send to some topic (idempotent producers need it).
func (g *Grants) SendsAnywhere() bool {
	if g == nil {
		return false
	}
	if gl := g.Global; gl.SendMessages || gl.ManageStreams || gl.ManageTopics {
		return true
	}
	for _, s := range g.Streams {
		if s.ManageStream || s.ManageTopics || s.SendMessages {
			return true
		}
		for _, t := range s.Topics {
			if t.ManageTopic || t.SendMessages {
				return true
			}
		}
	}
	return false
}
