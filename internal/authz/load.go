package authz

import (
	"context"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// Source is where permissions are read: the bridge client. The bridge account needs
// read_users (the root user has it) and read access to the streams named in permissions.
type Source interface {
	GetUser(ctx context.Context, user iggy.Identifier) (*iggy.User, error)
	GetStream(ctx context.Context, stream iggy.Identifier) (*iggy.Stream, error)
}

// Load reads user's permissions and resolves their stream and topic ids to names. A user
// Iggy does not know (deleted since it authenticated) or an inactive one gets no grants.
// Permissions on streams or topics that no longer exist are dropped.
func Load(ctx context.Context, src Source, user string, now time.Time) (*Grants, error) {
	return load(ctx, src, user, now, nil)
}

// topicRef is a per-topic permission's target as Iggy keeps it: numeric ids.
type topicRef struct{ stream, topic uint32 }

// topicIdentity tells one topic from another that later got the same numeric id: Iggy reuses
// the ids of deleted topics, but a topic's creation time is its own for its whole life (a
// rename keeps it). The name stands in when a server reports no creation time.
type topicIdentity struct {
	createdAt uint64
	name      string
}

func identityOf(t iggy.Topic) topicIdentity {
	if t.CreatedAt != 0 {
		return topicIdentity{createdAt: t.CreatedAt}
	}
	return topicIdentity{name: t.Name}
}

// bindings are one user's per-topic permissions, each bound to the topic it was first seen
// naming. A permission whose id now names another topic grants nothing (docs/SECURITY.md,
// "Reused topic ids"): a tenant that deleted its topic must not inherit the next topic created
// in the stream. A binding lives as long as the permission: once Iggy no longer lists it, a
// new permission with the same ids binds afresh.
type bindings map[topicRef]topicIdentity

// load is Load, checking and recording per-topic permissions in bound when it is not nil.
func load(ctx context.Context, src Source, user string, now time.Time, bound bindings) (*Grants, error) {
	g := &Grants{User: user, Read: now}
	u, err := src.GetUser(ctx, iggy.Name(user))
	if isNotFound(err) {
		clear(bound)
		return g, nil
	}
	if err != nil {
		return nil, err
	}
	pruneBindings(bound, u.Permissions)
	if u.Status != iggy.UserActive || u.Permissions == nil {
		return g, nil
	}
	g.Global = u.Permissions.Global
	for _, sp := range u.Permissions.Streams {
		st, err := src.GetStream(ctx, iggy.ID(sp.StreamID))
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if g.Streams == nil {
			g.Streams = make(map[string]StreamGrants, len(u.Permissions.Streams))
		}
		g.Streams[st.Name] = streamGrants(sp, st, bound)
	}
	return g, nil
}

func streamGrants(sp iggy.StreamPermissions, st *iggy.Stream, bound bindings) StreamGrants {
	s := StreamGrants{
		ManageStream: sp.ManageStream, ReadStream: sp.ReadStream, ManageTopics: sp.ManageTopics,
		ReadTopics: sp.ReadTopics, PollMessages: sp.PollMessages, SendMessages: sp.SendMessages,
	}
	topics := make(map[uint32]iggy.Topic, len(st.Topics))
	for _, t := range st.Topics {
		topics[t.ID] = t
	}
	for _, tp := range sp.Topics {
		t, ok := topics[tp.TopicID]
		if !ok {
			continue // deleted: the binding stays, for a topic that may get the id later
		}
		if bound != nil {
			ref, id := topicRef{sp.StreamID, tp.TopicID}, identityOf(t)
			if first, seen := bound[ref]; seen && first != id {
				continue // the id now names another topic
			} else if !seen {
				bound[ref] = id
			}
		}
		name := t.Name
		if s.Topics == nil {
			s.Topics = make(map[string]TopicGrants, len(sp.Topics))
		}
		s.Topics[name] = TopicGrants{ManageTopic: tp.ManageTopic, ReadTopic: tp.ReadTopic, PollMessages: tp.PollMessages, SendMessages: tp.SendMessages}
	}
	return s
}

func isNotFound(err error) bool {
	return iggy.IsCode(err, iggy.CodeResourceNotFound, iggy.CodeStreamIDNotFound, iggy.CodeStreamNameNotFound)
}

// pruneBindings forgets the bindings of per-topic permissions p no longer lists.
func pruneBindings(bound bindings, p *iggy.Permissions) {
	if len(bound) == 0 {
		return
	}
	listed := make(map[topicRef]bool)
	if p != nil {
		for _, sp := range p.Streams {
			for _, tp := range sp.Topics {
				listed[topicRef{sp.StreamID, tp.TopicID}] = true
			}
		}
	}
	for ref := range bound {
		if !listed[ref] {
			delete(bound, ref)
		}
	}
}
