package groups

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/groups/groupstest"
)

// TestConcurrentMembers runs dynamic and static members of two groups through the blocking
// API concurrently (join, sync, heartbeat, commit checks, describe, leave) while time moves.
// Run with -race; it checks that every member finishes and that generations grow one at a time.
func TestConcurrentMembers(t *testing.T) {
	clock := groupstest.NewClock()
	var mu sync.Mutex
	last := map[string]GenerationEvent{}
	cfg := DefaultConfig()
	cfg.Clock = clock
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.InitialRebalanceDelay = time.Second
	cfg.OnGeneration = func(ev GenerationEvent) {
		mu.Lock()
		defer mu.Unlock()
		// Generations grow within a group's life; a group that became empty is dropped from
		// memory and (without stored state) starts again at 1.
		if prev, ok := last[ev.Group]; ok && prev.Members > 0 && ev.Generation != prev.Generation+1 {
			t.Errorf("group %s: generation %d after %d", ev.Group, ev.Generation, prev.Generation)
		}
		last[ev.Group] = ev
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	stop := make(chan struct{})
	ticker := sync.WaitGroup{}
	ticker.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				clock.Advance(50 * time.Millisecond)
				runtime.Gosched()
			}
		}
	})
	var wg sync.WaitGroup
	for g := range 2 {
		group := fmt.Sprintf("group-%d", g)
		for m := range 4 {
			var instance *string
			if m%2 == 1 {
				instance = kmsg.StringPtr(fmt.Sprintf("%s-static-%d", group, m))
			}
			wg.Go(func() { runMember(ctx, c, group, fmt.Sprintf("client-%d", m), instance, 15) })
		}
	}
	wg.Wait()
	close(stop)
	ticker.Wait()
	if ctx.Err() != nil {
		t.Fatal("members did not finish: a barrier never completed")
	}
	// Every member left; dynamic ones immediately, static ones by LeaveGroup with their
	// instance id. Nothing is left in memory.
	clock.Advance(time.Hour)
	c.mu.Lock()
	n := len(c.groups)
	c.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d groups left in memory", n)
	}
}

func runMember(ctx context.Context, c *Coordinator, group, client string, instance *string, rounds int) {
	memberID := ""
	for done := 0; done < rounds && ctx.Err() == nil; {
		jr := kmsg.NewPtrJoinGroupRequest()
		jr.Version = 9
		jr.Group = group
		jr.MemberID = memberID
		jr.InstanceID = instance
		jr.SessionTimeoutMillis = 10000
		jr.RebalanceTimeoutMillis = 5000
		jr.ProtocolType = "consumer"
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name = "range"
		p.Metadata = []byte(client)
		jr.Protocols = []kmsg.JoinGroupRequestProtocol{p}
		resp := c.JoinGroup(ctx, Client{ID: client}, jr)
		switch resp.ErrorCode {
		case 0:
		case kerr.MemberIDRequired.Code:
			memberID = resp.MemberID
			continue
		case kerr.UnknownMemberID.Code, kerr.FencedInstanceID.Code:
			memberID = ""
			continue
		default:
			continue
		}
		memberID = resp.MemberID
		sr := kmsg.NewPtrSyncGroupRequest()
		sr.Version = 5
		sr.Group = group
		sr.MemberID = memberID
		sr.InstanceID = instance
		sr.Generation = resp.Generation
		for _, m := range resp.Members {
			a := kmsg.NewSyncGroupRequestGroupAssignment()
			a.MemberID = m.MemberID
			a.MemberAssignment = m.ProtocolMetadata
			sr.GroupAssignment = append(sr.GroupAssignment, a)
		}
		if c.SyncGroup(ctx, sr).ErrorCode != 0 {
			continue
		}
		for range 3 {
			hb := kmsg.NewPtrHeartbeatRequest()
			hb.Group, hb.MemberID, hb.InstanceID, hb.Generation = group, memberID, instance, resp.Generation
			if c.Heartbeat(hb).ErrorCode != 0 {
				break
			}
			c.ValidateOffsetCommit(group, memberID, instance, resp.Generation)
		}
		dr := kmsg.NewPtrDescribeGroupsRequest()
		dr.Groups = []string{group}
		c.DescribeGroups(dr)
		c.ListGroups(kmsg.NewPtrListGroupsRequest())
		done++
	}
	lr := kmsg.NewPtrLeaveGroupRequest()
	lr.Version = 4
	lr.Group = group
	lm := kmsg.NewLeaveGroupRequestMember()
	if instance != nil {
		lm.InstanceID = instance
	} else {
		lm.MemberID = memberID
	}
	lr.Members = append(lr.Members, lm)
	c.LeaveGroup(lr)
}
