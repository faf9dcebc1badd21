package groups

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteGroups handles a DeleteGroups request: a group may be deleted only when it has no
// members (NON_EMPTY_GROUP otherwise); its stored state (committed offsets) goes with it. A
// group that exists neither in memory nor in storage is GROUP_ID_NOT_FOUND.
func (c *Coordinator) DeleteGroups(ctx context.Context, req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, name := range req.Groups {
		dg := kmsg.NewDeleteGroupsResponseGroup()
		dg.Group = name
		err := c.checkGroupID(name, true)
		if err == nil {
			err = c.deleteGroup(ctx, name)
		}
		if err != nil {
			dg.ErrorCode = err.Code
		}
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

func (c *Coordinator) deleteGroup(ctx context.Context, name string) *kerr.Error {
	inMemory, err := c.dropConsumerGroup(name)
	if err != nil {
		return err
	}
	if g, _ := c.lockGroup(name, false); g != nil {
		if g.state != stateEmpty {
			g.mu.Unlock()
			return kerr.NonEmptyGroup
		}
		for id := range g.pending {
			g.removePending(id)
		}
		inMemory = true
		c.unlockAndMaybeDrop(g)
	}
	stored := false
	if c.cfg.Stored != nil {
		existed, err := c.cfg.Stored.DeleteGroup(ctx, name)
		if err != nil {
			c.cfg.Logger.Warn("deleting stored consumer group failed", "group", name, "err", err)
			var ke *kerr.Error
			if errors.As(err, &ke) {
				return ke
			}
			return kerr.UnknownServerError
		}
		stored = existed
	}
	if !inMemory && !stored {
		return kerr.GroupIDNotFound
	}
	return nil
}
