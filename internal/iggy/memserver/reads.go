package memserver

import (
	"net"
	"strconv"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// nonReplicated answers the NonReplicated operation: reads, ping and unknown codes.
func (c *conn) nonReplicated(h *wire.RequestHeader, sess *session, body []byte) bool {
	st := c.srv.state
	out := c.out[:0]
	defer func() { c.out = out[:0] }()
	switch h.Code {
	case wire.CodePing:
		return c.answer(h, nil)
	case wire.CodeGetMe:
		me := st.me(sess)
		out = wire.AppendMe(out, &me)
		return c.answer(h, nil, out)
	case wire.CodeGetClusterMetadata:
		md := c.srv.clusterMetadata()
		out = wire.AppendClusterMetadata(out, &md)
		return c.answer(h, nil, out)
	case wire.CodePollMessages:
		return c.poll(h, sess, body)
	case wire.CodeGetConsumerOffset:
		req, err := wire.DecodeGetConsumerOffset(body)
		if err != nil {
			return c.answer(h, nil) // the real server answers an empty body ("no offset")
		}
		o, found, oerr := st.getOffset(sess, req.Consumer, req.Stream, req.Topic, req.Partition)
		if oerr != nil || !found {
			return c.answer(h, oerr)
		}
		out = wire.AppendConsumerOffset(out, &o)
		return c.answer(h, nil, out)
	case wire.CodeSyncConsumerGroup:
		var sid, tid, gid wire.Identifier
		if wire.DecodeIdentifiers(body, &sid, &tid, &gid) != nil {
			return c.answer(h, nil)
		}
		a, found := st.syncGroup(sess, sid, tid, gid)
		if !found {
			return c.answer(h, nil)
		}
		out = wire.AppendGroupAssignment(out, &a)
		return c.answer(h, nil, out)
	case wire.CodeGetStream:
		var sid wire.Identifier
		if err := wire.DecodeIdentifiers(body, &sid); err != nil {
			return c.answer(h, decodeDenial(err))
		}
		v, found, err := st.getStream(sess, sid)
		if err != nil || !found {
			return c.answer(h, err)
		}
		v.Topics = make([]wire.Topic, len(v.topics))
		for i := range v.topics {
			v.Topics[i] = v.topics[i].Topic
		}
		out = wire.AppendStreamDetails(out, &v.Stream)
		return c.answer(h, nil, out)
	case wire.CodeGetStreams:
		if len(body) != 0 {
			return c.answer(h, deny(codeInvalidCommand))
		}
		vs, err := st.getStreams(sess)
		for i := range vs {
			out = wire.AppendStream(out, &vs[i].Stream)
		}
		return c.answer(h, err, out)
	case wire.CodeGetTopic:
		var sid, tid wire.Identifier
		if err := wire.DecodeIdentifiers(body, &sid, &tid); err != nil {
			return c.answer(h, decodeDenial(err))
		}
		v, found, err := st.getTopic(sess, sid, tid)
		if err != nil || !found {
			return c.answer(h, err)
		}
		out = wire.AppendTopicDetails(out, &v.Topic)
		return c.answer(h, nil, out)
	case wire.CodeGetTopics:
		var sid wire.Identifier
		if err := wire.DecodeIdentifiers(body, &sid); err != nil {
			return c.answer(h, decodeDenial(err))
		}
		vs, err := st.getTopics(sess, sid)
		if err != nil {
			return c.answer(h, err)
		}
		topics := make([]wire.Topic, len(vs))
		for i := range vs {
			topics[i] = vs[i].Topic
		}
		out = wire.AppendTopics(out, topics)
		return c.answer(h, nil, out)
	case wire.CodeGetConsumerGroup:
		var sid, tid, gid wire.Identifier
		if err := wire.DecodeIdentifiers(body, &sid, &tid, &gid); err != nil {
			return c.answer(h, decodeDenial(err))
		}
		v, found, err := st.getGroup(sess, sid, tid, gid)
		if err != nil || !found {
			return c.answer(h, err)
		}
		out = wire.AppendConsumerGroup(out, &v.ConsumerGroup)
		return c.answer(h, nil, out)
	case wire.CodeGetConsumerGroups:
		var sid, tid wire.Identifier
		if err := wire.DecodeIdentifiers(body, &sid, &tid); err != nil {
			return c.answer(h, decodeDenial(err))
		}
		vs, err := st.getGroups(sess, sid, tid)
		if err != nil {
			return c.answer(h, err)
		}
		groups := make([]wire.ConsumerGroup, len(vs))
		for i := range vs {
			groups[i] = vs[i].ConsumerGroup
		}
		out = wire.AppendConsumerGroups(out, groups)
		return c.answer(h, nil, out)
	case wire.CodeGetUser:
		var uid wire.Identifier
		if err := wire.DecodeIdentifiers(body, &uid); err != nil {
			return c.answer(h, decodeDenial(err))
		}
		v, found, err := st.getUser(sess, uid)
		if err != nil || !found {
			return c.answer(h, err)
		}
		out = wire.AppendUserDetails(out, &v.User)
		return c.answer(h, nil, out)
	case wire.CodeGetUsers:
		vs, err := st.getUsers(sess)
		for i := range vs {
			out = wire.AppendUser(out, &vs[i].User)
		}
		return c.answer(h, err, out)
	case wire.CodeGetPATs:
		out = wire.AppendPATs(out, st.getPATs(sess))
		return c.answer(h, nil, out)
	case wire.CodeFlushUnsavedBuffer:
		// The real server has no flush primitive and says so.
		return c.answer(h, deny(codeFeatureUnavailable))
	case wire.CodeGetStats, wire.CodeGetSnapshot, wire.CodeGetClient, wire.CodeGetClients, wire.CodeDescribeOptions:
		// Real commands this server does not implement.
		return c.answer(h, deny(codeFeatureUnavailable))
	}
	if _, replicated := replicatedCode(h.Code); replicated {
		// A replicated command sent as NonReplicated (real server: FeatureUnavailable).
		return c.answer(h, deny(codeFeatureUnavailable))
	}
	return c.answer(h, deny(codeInvalidCommand))
}

// replicatedCode reports whether code is a command that travels under its own operation.
func replicatedCode(code uint32) (uint8, bool) {
	op := wire.OperationForCode(code)
	return op, op != wire.OpNonReplicated
}

// poll answers PollMessages. Stored batches are immutable, so the reply is assembled after
// the state lock is released.
func (c *conn) poll(h *wire.RequestHeader, sess *session, body []byte) bool {
	out := c.out[:0]
	defer func() { c.out = out[:0] }()
	req, err := wire.DecodePollRequest(body)
	if err != nil {
		out = wire.AppendPollReplyHeader(out, 0, 0, 0)
		return c.answer(h, nil, out)
	}
	p, oerr := c.srv.state.pollMessages(sess, req)
	if oerr != nil {
		return c.answer(h, oerr)
	}
	out = wire.AppendPollReplyHeader(out, p.partitionID, p.currentOffset, p.count)
	out, err = appendSpans(out, p.spans)
	if err != nil {
		// Stored batches were verified on append; failing to slice one is a server bug.
		c.srv.log.Error("poll: cannot slice a stored batch", "err", err)
		out = wire.AppendPollReplyHeader(out[:0], p.partitionID, p.currentOffset, 0)
	}
	return c.answer(h, nil, out)
}

// clusterMetadata is the cluster's roster, or the single synthetic leader node a server without
// clustering reports.
func (s *Server) clusterMetadata() wire.ClusterMetadata {
	if s.cluster != nil {
		return s.cluster.metadata()
	}
	host, port, _ := net.SplitHostPort(s.Addr())
	p, _ := strconv.Atoi(port)
	return wire.ClusterMetadata{
		Name: "iggy-memserver",
		Nodes: []wire.ClusterNode{{
			Name:    "iggy-memserver-0",
			IP:      host,
			TCPPort: uint16(p),
			Role:    0, // leader
			Status:  0, // healthy
		}},
	}
}
