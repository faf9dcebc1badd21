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
// Permissions on streams or topics that no longer exist are dropped: Iggy's ids are never
// reused, so they can grant nothing.
func Load(ctx context.Context, src Source, user string, now time.Time) (*Grants, error) {
	g := &Grants{User: user, Read: now}
	u, err := src.GetUser(ctx, iggy.Name(user))
	if isNotFound(err) {
		return g, nil
	}
	if err != nil {
		return nil, err
	}
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
		g.Streams[st.Name] = streamGrants(sp, st)
	}
	return g, nil
}

func streamGrants(sp iggy.StreamPermissions, st *iggy.Stream) StreamGrants {
	s := StreamGrants{
		ManageStream: sp.ManageStream, ReadStream: sp.ReadStream, ManageTopics: sp.ManageTopics,
		ReadTopics: sp.ReadTopics, PollMessages: sp.PollMessages, SendMessages: sp.SendMessages,
	}
	names := make(map[uint32]string, len(st.Topics))
	for _, t := range st.Topics {
		names[t.ID] = t.Name
	}
	for _, tp := range sp.Topics {
		name, ok := names[tp.TopicID]
		if !ok {
			continue
		}
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
