package authz

import (
	"context"
	"errors"
	"fmt"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// StreamReader finds a topic's ids.
type StreamReader interface {
	GetStream(ctx context.Context, stream iggy.Identifier) (*iggy.Stream, error)
}

// PermissionEditor lists users and replaces their permissions: the bridge client, when the
// bridge account may manage users (the root user may).
type PermissionEditor interface {
	GetUsers(ctx context.Context) ([]iggy.User, error)
	GetUser(ctx context.Context, user iggy.Identifier) (*iggy.User, error)
	UpdatePermissions(ctx context.Context, user iggy.Identifier, perms *iggy.Permissions) error
}

// DeletedTopic is a topic about to be deleted, named by the ids its per-topic permissions use.
// Iggy keeps those permissions after the topic is gone and reuses its id for the next topic
// created in the stream, which would inherit them; Revoke withdraws them once the topic is
// deleted, so that they survive neither in Iggy nor in a gateway that never saw the old topic
// (docs/SECURITY.md, "Reused topic ids").
type DeletedTopic struct {
	store             StreamReader
	streamID, topicID uint32
	err               error // the ids could not be found
}

// BeforeDelete finds the ids of topic in stream; call it before deleting the topic.
func BeforeDelete(ctx context.Context, store StreamReader, stream, topic string) *DeletedTopic {
	d := &DeletedTopic{store: store}
	st, err := store.GetStream(ctx, iggy.Name(stream))
	if err != nil {
		d.err = fmt.Errorf("finding the ids of %s/%s: %w", stream, topic, err)
		return d
	}
	for _, t := range st.Topics {
		if t.Name == topic {
			d.streamID, d.topicID = st.ID, t.ID
			return d
		}
	}
	d.err = fmt.Errorf("finding the ids of %s/%s: no such topic", stream, topic)
	return d
}

// errNoEditor: the store cannot change permissions.
var errNoEditor = errors.New("the Iggy client cannot list users or change their permissions")

// Revoke removes every per-topic permission on the deleted topic from every Iggy user, and
// returns the users whose permissions changed. It reads and replaces each user's permissions,
// so a change made to them in Iggy at the same moment may be lost.
func (d *DeletedTopic) Revoke(ctx context.Context) ([]string, error) {
	if d.err != nil {
		return nil, d.err
	}
	ed, ok := d.store.(PermissionEditor)
	if !ok {
		return nil, errNoEditor
	}
	users, err := ed.GetUsers(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing users: %w", err)
	}
	var changed []string
	var errs []error
	for _, listed := range users {
		u, err := ed.GetUser(ctx, iggy.ID(listed.ID))
		if err != nil {
			if !isNotFound(err) { // deleted meanwhile: nothing to withdraw
				errs = append(errs, fmt.Errorf("reading user %s: %w", listed.Username, err))
			}
			continue
		}
		perms, ok := withoutTopic(u.Permissions, d.streamID, d.topicID)
		if !ok {
			continue
		}
		if err := ed.UpdatePermissions(ctx, iggy.ID(u.ID), perms); err != nil {
			errs = append(errs, fmt.Errorf("updating the permissions of %s: %w", u.Username, err))
			continue
		}
		changed = append(changed, u.Username)
	}
	return changed, errors.Join(errs...)
}

// withoutTopic returns p without its per-topic permissions on (stream, topic), and whether it
// had any. p is not modified.
func withoutTopic(p *iggy.Permissions, stream, topic uint32) (*iggy.Permissions, bool) {
	if p == nil {
		return nil, false
	}
	out := *p
	out.Streams = make([]iggy.StreamPermissions, len(p.Streams))
	found := false
	for i, sp := range p.Streams {
		out.Streams[i] = sp
		if sp.StreamID != stream {
			continue
		}
		out.Streams[i].Topics = nil
		for _, tp := range sp.Topics {
			if tp.TopicID == topic {
				found = true
				continue
			}
			out.Streams[i].Topics = append(out.Streams[i].Topics, tp)
		}
	}
	return &out, found
}
