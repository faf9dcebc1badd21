package memserver

import "github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"

// The rules below are Iggy's permissioner (core/metadata/src/permissioner): global flags, then
// per-stream flags, then per-topic flags, with the same inheritance (manage implies read,
// read_topics implies poll, manage_topics implies send, ...). A user without permissions may
// do nothing but what needs only a login (ping, GetMe, its own PATs and password, ...). The
// root user holds every grant.

// grants is the permission set of the acting user; nil means none.
type grants struct {
	root  bool
	perms *wire.Permissions
}

func (g grants) global() *wire.GlobalPermissions {
	if g.perms == nil {
		return &wire.GlobalPermissions{}
	}
	return &g.perms.Global
}

func (g grants) stream(id uint32) *wire.StreamPermissions {
	if g.perms == nil {
		return nil
	}
	for i := range g.perms.Streams {
		if g.perms.Streams[i].StreamID == id {
			return &g.perms.Streams[i]
		}
	}
	return nil
}

func (g grants) topic(streamID, topicID uint32) *wire.TopicPermissions {
	s := g.stream(streamID)
	if s == nil {
		return nil
	}
	for i := range s.Topics {
		if s.Topics[i].TopicID == topicID {
			return &s.Topics[i]
		}
	}
	return nil
}

func allow(ok bool) *opError {
	if ok {
		return nil
	}
	return deny(codeUnauthorized)
}

func (g grants) readUsers() *opError {
	gl := g.global()
	return allow(g.root || gl.ManageUsers || gl.ReadUsers)
}

func (g grants) manageUsers() *opError {
	return allow(g.root || g.global().ManageUsers)
}

func (g grants) getStreams() *opError {
	gl := g.global()
	return allow(g.root || gl.ManageStreams || gl.ReadStreams)
}

func (g grants) createStream() *opError {
	return allow(g.root || g.global().ManageStreams)
}

func (g grants) getStream(s uint32) *opError {
	if g.getStreams() == nil {
		return nil
	}
	sp := g.stream(s)
	return allow(sp != nil && (sp.ManageStream || sp.ReadStream))
}

func (g grants) manageStream(s uint32) *opError {
	if g.root || g.global().ManageStreams {
		return nil
	}
	sp := g.stream(s)
	return allow(sp != nil && sp.ManageStream)
}

func (g grants) getTopics(s uint32) *opError {
	gl := g.global()
	if g.root || gl.ReadStreams || gl.ManageStreams || gl.ManageTopics || gl.ReadTopics {
		return nil
	}
	sp := g.stream(s)
	return allow(sp != nil && (sp.ManageStream || sp.ReadStream || sp.ManageTopics || sp.ReadTopics))
}

func (g grants) getTopic(s, t uint32) *opError {
	if g.getTopics(s) == nil {
		return nil
	}
	tp := g.topic(s, t)
	return allow(tp != nil && (tp.ManageTopic || tp.ReadTopic))
}

func (g grants) createTopic(s uint32) *opError {
	gl := g.global()
	if g.root || gl.ManageStreams || gl.ManageTopics {
		return nil
	}
	sp := g.stream(s)
	return allow(sp != nil && (sp.ManageStream || sp.ManageTopics))
}

func (g grants) manageTopic(s, t uint32) *opError {
	if g.createTopic(s) == nil {
		return nil
	}
	tp := g.topic(s, t)
	return allow(tp != nil && tp.ManageTopic)
}

func (g grants) pollMessages(s, t uint32) *opError {
	gl := g.global()
	if g.root || gl.PollMessages || gl.ReadTopics || gl.ManageTopics || gl.ReadStreams || gl.ManageStreams {
		return nil
	}
	sp := g.stream(s)
	if sp == nil {
		return deny(codeUnauthorized)
	}
	if sp.ManageStream || sp.ReadStream || sp.ManageTopics || sp.ReadTopics || sp.PollMessages {
		return nil
	}
	tp := g.topic(s, t)
	return allow(tp != nil && (tp.ManageTopic || tp.ReadTopic || tp.PollMessages))
}

func (g grants) sendMessages(s, t uint32) *opError {
	gl := g.global()
	if g.root || gl.SendMessages || gl.ManageStreams || gl.ManageTopics {
		return nil
	}
	sp := g.stream(s)
	if sp == nil {
		return deny(codeUnauthorized)
	}
	if sp.ManageStream || sp.ManageTopics || sp.SendMessages {
		return nil
	}
	tp := g.topic(s, t)
	return allow(tp != nil && (tp.ManageTopic || tp.SendMessages))
}

// asRejection turns an authorization denial into the committed rejection metadata operations
// report (the real server gates them inside the state machine apply).
func asRejection(err *opError) *opError {
	if err == nil {
		return nil
	}
	return reject(err.code)
}
