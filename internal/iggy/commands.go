package iggy

import (
	"context"
	"fmt"
	"sync"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// call is one command to send: body is the encoded request body and tail, when set, is sent
// after it without being copied (the message batch of SendMessages). keep tells the
// connection that the decoded result aliases the reply buffer, so it must not be reused; the
// connection then hands that buffer over in kept.
type call struct {
	code uint32
	body []byte
	tail []byte
	keep bool
	kept []byte
}

// exchanger runs one call and hands its reply payload to decode, which must not retain it
// unless the call sets keep. *Conn and *Client implement it.
type exchanger interface {
	exchange(ctx context.Context, c *call, decode func(payload []byte) error) error
}

// commands implements API on top of an exchanger; *Conn and *Client embed it.
type commands struct{ x exchanger }

func (c commands) do(ctx context.Context, code uint32, body []byte, decode func([]byte) error) error {
	return c.x.exchange(ctx, &call{code: code, body: body}, decode)
}

// invalid reports a bad argument without contacting the server.
func invalid(code uint32, err error) error {
	return fmt.Errorf("iggy %s: %w", commandName(code), err)
}

func notFound(code uint32, id Identifier, byID, byName uint32) error {
	if id.IsName() {
		return &Error{Code: byName, Op: commandName(code)}
	}
	return &Error{Code: byID, Op: commandName(code)}
}

func checkIDs(code uint32, ids ...Identifier) error {
	for _, id := range ids {
		if err := wire.CheckIdentifier("identifier", id); err != nil {
			return invalid(code, err)
		}
	}
	return nil
}

// Ping checks the connection and refreshes the server's liveness clock for the session.
func (c commands) Ping(ctx context.Context) error {
	return c.do(ctx, wire.CodePing, nil, nil)
}

// GetMe describes the caller's connection.
func (c commands) GetMe(ctx context.Context) (*Me, error) {
	var m *Me
	err := c.do(ctx, wire.CodeGetMe, nil, func(b []byte) (err error) { m, err = wire.DecodeMe(b); return err })
	return m, err
}

// GetClusterMetadata returns the cluster's nodes.
func (c commands) GetClusterMetadata(ctx context.Context) (*ClusterMetadata, error) {
	var m *ClusterMetadata
	err := c.do(ctx, wire.CodeGetClusterMetadata, nil, func(b []byte) (err error) { m, err = wire.DecodeClusterMetadata(b); return err })
	return m, err
}

// GetStream returns a stream with its topics, or an *Error 1009/1010 when it does not exist.
func (c commands) GetStream(ctx context.Context, stream Identifier) (*Stream, error) {
	if err := checkIDs(wire.CodeGetStream, stream); err != nil {
		return nil, err
	}
	var s *Stream
	err := c.do(ctx, wire.CodeGetStream, wire.AppendIdentifier(nil, stream), func(b []byte) (err error) {
		if len(b) == 0 {
			return nil
		}
		s, err = wire.DecodeStreamDetails(b)
		return err
	})
	if err == nil && s == nil {
		err = notFound(wire.CodeGetStream, stream, CodeStreamIDNotFound, CodeStreamNameNotFound)
	}
	return s, err
}

// GetStreams lists all streams (without their topics).
func (c commands) GetStreams(ctx context.Context) ([]Stream, error) {
	var s []Stream
	err := c.do(ctx, wire.CodeGetStreams, nil, func(b []byte) (err error) { s, err = wire.DecodeStreams(b); return err })
	return s, err
}

// CreateStream creates a stream and returns it.
func (c commands) CreateStream(ctx context.Context, name string) (*Stream, error) {
	if err := wire.CheckName("stream name", name); err != nil {
		return nil, invalid(wire.CodeCreateStream, err)
	}
	var s *Stream
	err := c.do(ctx, wire.CodeCreateStream, wire.AppendCreateStream(nil, name), func(b []byte) (err error) {
		s, err = wire.DecodeStreamDetails(b)
		return err
	})
	return s, err
}

// DeleteStream deletes a stream and everything in it.
func (c commands) DeleteStream(ctx context.Context, stream Identifier) error {
	if err := checkIDs(wire.CodeDeleteStream, stream); err != nil {
		return err
	}
	return c.do(ctx, wire.CodeDeleteStream, wire.AppendIdentifier(nil, stream), nil)
}

// GetTopic returns a topic with its partitions, or an *Error 2010/2011 when it does not exist.
// The server answers a missing stream the same way, so a missing stream also reports
// 2010/2011.
func (c commands) GetTopic(ctx context.Context, stream, topic Identifier) (*Topic, error) {
	if err := checkIDs(wire.CodeGetTopic, stream, topic); err != nil {
		return nil, err
	}
	var t *Topic
	err := c.do(ctx, wire.CodeGetTopic, wire.AppendIdentifiers(nil, stream, topic), func(b []byte) (err error) {
		if len(b) == 0 {
			return nil
		}
		t, err = wire.DecodeTopicDetails(b)
		return err
	})
	if err == nil && t == nil {
		err = notFound(wire.CodeGetTopic, topic, CodeTopicIDNotFound, CodeTopicNameNotFound)
	}
	return t, err
}

// GetTopics lists a stream's topics (without partitions).
func (c commands) GetTopics(ctx context.Context, stream Identifier) ([]Topic, error) {
	if err := checkIDs(wire.CodeGetTopics, stream); err != nil {
		return nil, err
	}
	var t []Topic
	err := c.do(ctx, wire.CodeGetTopics, wire.AppendIdentifier(nil, stream), func(b []byte) (err error) { t, err = wire.DecodeTopics(b); return err })
	return t, err
}

// CreateTopic creates a topic with partitions partitions and returns it with its partitions.
func (c commands) CreateTopic(ctx context.Context, stream Identifier, name string, partitions uint32, opts TopicOptions) (*Topic, error) {
	if err := checkIDs(wire.CodeCreateTopic, stream); err != nil {
		return nil, err
	}
	if err := wire.CheckName("topic name", name); err != nil {
		return nil, invalid(wire.CodeCreateTopic, err)
	}
	if err := checkCompression(opts); err != nil {
		return nil, invalid(wire.CodeCreateTopic, err)
	}
	body := wire.AppendCreateTopic(nil, &wire.CreateTopicRequest{Stream: stream, PartitionsCount: partitions, Name: name, Options: opts})
	var t *Topic
	err := c.do(ctx, wire.CodeCreateTopic, body, func(b []byte) (err error) { t, err = wire.DecodeTopicDetails(b); return err })
	return t, err
}

func checkCompression(opts TopicOptions) error {
	switch opts.Compression {
	case "", "none", "gzip":
		return nil
	}
	return fmt.Errorf("compression %q: want none or gzip", opts.Compression)
}

// UpdateTopic renames a topic and/or changes its options (zero options are unchanged). An
// empty name keeps the current one, at the cost of a GetTopic first.
func (c commands) UpdateTopic(ctx context.Context, stream, topic Identifier, name string, opts TopicOptions) error {
	if err := checkIDs(wire.CodeUpdateTopic, stream, topic); err != nil {
		return err
	}
	if err := checkCompression(opts); err != nil {
		return invalid(wire.CodeUpdateTopic, err)
	}
	if name == "" {
		t, err := c.GetTopic(ctx, stream, topic)
		if err != nil {
			return err
		}
		name = t.Name
	}
	if err := wire.CheckName("topic name", name); err != nil {
		return invalid(wire.CodeUpdateTopic, err)
	}
	body := wire.AppendUpdateTopic(nil, &wire.UpdateTopicRequest{Stream: stream, Topic: topic, Name: name, Options: opts})
	return c.do(ctx, wire.CodeUpdateTopic, body, nil)
}

// DeleteTopic deletes a topic.
func (c commands) DeleteTopic(ctx context.Context, stream, topic Identifier) error {
	if err := checkIDs(wire.CodeDeleteTopic, stream, topic); err != nil {
		return err
	}
	return c.do(ctx, wire.CodeDeleteTopic, wire.AppendIdentifiers(nil, stream, topic), nil)
}

// PurgeTopic deletes all messages of a topic.
func (c commands) PurgeTopic(ctx context.Context, stream, topic Identifier) error {
	if err := checkIDs(wire.CodePurgeTopic, stream, topic); err != nil {
		return err
	}
	return c.do(ctx, wire.CodePurgeTopic, wire.AppendIdentifiers(nil, stream, topic), nil)
}

// CreatePartitions adds count partitions (they get the next ids).
func (c commands) CreatePartitions(ctx context.Context, stream, topic Identifier, count uint32) error {
	if err := checkIDs(wire.CodeCreatePartitions, stream, topic); err != nil {
		return err
	}
	return c.do(ctx, wire.CodeCreatePartitions, wire.AppendPartitionsChange(nil, stream, topic, count), nil)
}

// DeletePartitions removes the count highest-numbered partitions.
func (c commands) DeletePartitions(ctx context.Context, stream, topic Identifier, count uint32) error {
	if err := checkIDs(wire.CodeDeletePartitions, stream, topic); err != nil {
		return err
	}
	return c.do(ctx, wire.CodeDeletePartitions, wire.AppendPartitionsChange(nil, stream, topic, count), nil)
}

var batchPool = sync.Pool{New: func() any { return wire.NewBatch(0) }}

// SendMessages sends msgs to one partition as one batch. A message with a zero ID gets a
// random one and a zero OriginTimestamp means now.
func (c commands) SendMessages(ctx context.Context, stream, topic Identifier, partition uint32, msgs []Message) (SendConfirmation, error) {
	b := batchPool.Get().(*Batch)
	b.Reset()
	defer batchPool.Put(b)
	size := 0
	for i := range msgs {
		size += len(msgs[i].Payload) + len(msgs[i].Headers)
	}
	b.Grow(len(msgs), size)
	for i := range msgs {
		m := &msgs[i]
		if err := b.AddWithID(m.ID, m.OriginTimestamp, m.Payload, m.Headers); err != nil {
			return SendConfirmation{}, invalid(wire.CodeSendMessages, fmt.Errorf("message %d: %w", i, err))
		}
	}
	return c.SendBatch(ctx, stream, topic, partition, b)
}

// SendBatch sends a batch built with NewBatch to one partition. The batch is not modified
// and can be reused once SendBatch returns.
func (c commands) SendBatch(ctx context.Context, stream, topic Identifier, partition uint32, b *Batch) (SendConfirmation, error) {
	if err := checkIDs(wire.CodeSendMessages, stream, topic); err != nil {
		return SendConfirmation{}, err
	}
	if b.Len() == 0 {
		return SendConfirmation{}, invalid(wire.CodeSendMessages, fmt.Errorf("empty batch"))
	}
	body := wire.AppendSendMessagesPrefix(make([]byte, 0, 64), stream, topic, partition, uint32(b.Len()))
	var conf SendConfirmation
	err := c.x.exchange(ctx, &call{code: wire.CodeSendMessages, body: body, tail: b.Bytes()}, func(p []byte) error {
		cs, err := wire.DecodeSendConfirmations(p)
		if err != nil {
			return err
		}
		if len(cs) == 0 {
			return fmt.Errorf("no send confirmation")
		}
		conf = cs[0]
		return nil
	})
	return conf, err
}

// PollMessages polls messages. The returned payloads and headers alias one reply buffer that
// belongs to the result: call its Release when done with them to let later replies reuse the
// buffer. Frame checksums are verified.
func (c commands) PollMessages(ctx context.Context, req PollRequest) (*Polled, error) {
	if err := checkIDs(wire.CodePollMessages, req.Stream, req.Topic, req.Consumer.ID); err != nil {
		return nil, err
	}
	var p *Polled
	cl := &call{code: wire.CodePollMessages, body: wire.AppendPollRequest(nil, &req), keep: true}
	err := c.x.exchange(ctx, cl, func(b []byte) (err error) {
		p, err = wire.DecodePolled(b, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	p.Own(cl.kept)
	return p, nil
}

func offsetRequest(consumer Consumer, stream, topic Identifier, partition *uint32) *wire.OffsetRequest {
	return &wire.OffsetRequest{Consumer: consumer, Stream: stream, Topic: topic, Partition: partition, Ack: wire.AckQuorum}
}

// GetConsumerOffset returns the stored offset, or (nil, nil) when none is stored.
func (c commands) GetConsumerOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition *uint32) (*ConsumerOffset, error) {
	if err := checkIDs(wire.CodeGetConsumerOffset, consumer.ID, stream, topic); err != nil {
		return nil, err
	}
	var o *ConsumerOffset
	body := wire.AppendGetConsumerOffset(nil, offsetRequest(consumer, stream, topic, partition))
	err := c.do(ctx, wire.CodeGetConsumerOffset, body, func(b []byte) (err error) { o, err = wire.DecodeConsumerOffset(b); return err })
	return o, err
}

// StoreConsumerOffset stores offset (the last consumed offset) with quorum acknowledgement.
func (c commands) StoreConsumerOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition *uint32, offset uint64) error {
	if err := checkIDs(wire.CodeStoreConsumerOffset, consumer.ID, stream, topic); err != nil {
		return err
	}
	r := offsetRequest(consumer, stream, topic, partition)
	r.Offset = offset
	return c.do(ctx, wire.CodeStoreConsumerOffset, wire.AppendStoreConsumerOffset(nil, r), nil)
}

// DeleteConsumerOffset deletes a stored offset.
func (c commands) DeleteConsumerOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition *uint32) error {
	if err := checkIDs(wire.CodeDeleteConsumerOffset, consumer.ID, stream, topic); err != nil {
		return err
	}
	return c.do(ctx, wire.CodeDeleteConsumerOffset, wire.AppendDeleteConsumerOffset(nil, offsetRequest(consumer, stream, topic, partition)), nil)
}

// CreateConsumerGroup creates an Iggy consumer group and returns it.
func (c commands) CreateConsumerGroup(ctx context.Context, stream, topic Identifier, name string) (*ConsumerGroup, error) {
	if err := checkIDs(wire.CodeCreateConsumerGroup, stream, topic); err != nil {
		return nil, err
	}
	if err := wire.CheckName("group name", name); err != nil {
		return nil, invalid(wire.CodeCreateConsumerGroup, err)
	}
	var g *ConsumerGroup
	err := c.do(ctx, wire.CodeCreateConsumerGroup, wire.AppendCreateConsumerGroup(nil, stream, topic, name), func(b []byte) (err error) {
		g, err = wire.DecodeConsumerGroup(b)
		return err
	})
	if err == nil && g == nil {
		// Some servers answer with an empty payload: read the group back.
		return c.GetConsumerGroup(ctx, stream, topic, Name(name))
	}
	return g, err
}

// GetConsumerGroup returns a group with its members, or an *Error 5000/5003 when it does not
// exist.
func (c commands) GetConsumerGroup(ctx context.Context, stream, topic, group Identifier) (*ConsumerGroup, error) {
	if err := checkIDs(wire.CodeGetConsumerGroup, stream, topic, group); err != nil {
		return nil, err
	}
	var g *ConsumerGroup
	err := c.do(ctx, wire.CodeGetConsumerGroup, wire.AppendIdentifiers(nil, stream, topic, group), func(b []byte) (err error) {
		g, err = wire.DecodeConsumerGroup(b)
		return err
	})
	if err == nil && g == nil {
		err = notFound(wire.CodeGetConsumerGroup, group, CodeConsumerGroupIDNotFound, CodeConsumerGroupNameNotFound)
	}
	return g, err
}

// GetConsumerGroups lists a topic's groups (without members).
func (c commands) GetConsumerGroups(ctx context.Context, stream, topic Identifier) ([]ConsumerGroup, error) {
	if err := checkIDs(wire.CodeGetConsumerGroups, stream, topic); err != nil {
		return nil, err
	}
	var g []ConsumerGroup
	err := c.do(ctx, wire.CodeGetConsumerGroups, wire.AppendIdentifiers(nil, stream, topic), func(b []byte) (err error) {
		g, err = wire.DecodeConsumerGroups(b)
		return err
	})
	return g, err
}

func (c commands) groupOp(ctx context.Context, code uint32, stream, topic, group Identifier) error {
	if err := checkIDs(code, stream, topic, group); err != nil {
		return err
	}
	return c.do(ctx, code, wire.AppendIdentifiers(nil, stream, topic, group), nil)
}

// DeleteConsumerGroup deletes a group.
func (c commands) DeleteConsumerGroup(ctx context.Context, stream, topic, group Identifier) error {
	return c.groupOp(ctx, wire.CodeDeleteConsumerGroup, stream, topic, group)
}

// JoinConsumerGroup makes this session a member of the group. Membership belongs to the
// session: use a Conn from Client.Acquire, not the pool.
func (c commands) JoinConsumerGroup(ctx context.Context, stream, topic, group Identifier) error {
	return c.groupOp(ctx, wire.CodeJoinConsumerGroup, stream, topic, group)
}

// LeaveConsumerGroup ends this session's membership.
func (c commands) LeaveConsumerGroup(ctx context.Context, stream, topic, group Identifier) error {
	return c.groupOp(ctx, wire.CodeLeaveConsumerGroup, stream, topic, group)
}

// SyncConsumerGroup returns this session's current partition assignment.
func (c commands) SyncConsumerGroup(ctx context.Context, stream, topic, group Identifier) (*GroupAssignment, error) {
	if err := checkIDs(wire.CodeSyncConsumerGroup, stream, topic, group); err != nil {
		return nil, err
	}
	var a *GroupAssignment
	err := c.do(ctx, wire.CodeSyncConsumerGroup, wire.AppendIdentifiers(nil, stream, topic, group), func(b []byte) (err error) {
		a, err = wire.DecodeGroupAssignment(b)
		return err
	})
	return a, err
}

// GetUser returns a user with permissions, or an *Error 20 (ResourceNotFound) when it does
// not exist.
func (c commands) GetUser(ctx context.Context, user Identifier) (*User, error) {
	if err := checkIDs(wire.CodeGetUser, user); err != nil {
		return nil, err
	}
	var u *User
	err := c.do(ctx, wire.CodeGetUser, wire.AppendIdentifier(nil, user), func(b []byte) (err error) {
		if len(b) == 0 {
			return nil
		}
		u, err = wire.DecodeUserDetails(b)
		return err
	})
	if err == nil && u == nil {
		err = &Error{Code: CodeResourceNotFound, Op: commandName(wire.CodeGetUser)}
	}
	return u, err
}

// GetUsers lists users (without permissions).
func (c commands) GetUsers(ctx context.Context) ([]User, error) {
	var u []User
	err := c.do(ctx, wire.CodeGetUsers, nil, func(b []byte) (err error) { u, err = wire.DecodeUsers(b); return err })
	return u, err
}

// CreateUser creates a user (status UserActive or UserInactive; perms may be nil).
func (c commands) CreateUser(ctx context.Context, username, password string, status uint8, perms *Permissions) (*User, error) {
	if err := wire.CheckName("username", username); err != nil {
		return nil, invalid(wire.CodeCreateUser, err)
	}
	if err := wire.CheckName("password", password); err != nil {
		return nil, invalid(wire.CodeCreateUser, err)
	}
	body := wire.AppendCreateUser(nil, &wire.CreateUserRequest{Username: username, Password: password, Status: status, Permissions: perms})
	var u *User
	err := c.do(ctx, wire.CodeCreateUser, body, func(b []byte) (err error) { u, err = wire.DecodeUserDetails(b); return err })
	return u, err
}

// DeleteUser deletes a user.
func (c commands) DeleteUser(ctx context.Context, user Identifier) error {
	if err := checkIDs(wire.CodeDeleteUser, user); err != nil {
		return err
	}
	return c.do(ctx, wire.CodeDeleteUser, wire.AppendIdentifier(nil, user), nil)
}

// UpdatePermissions replaces a user's permissions (nil removes them all).
func (c commands) UpdatePermissions(ctx context.Context, user Identifier, perms *Permissions) error {
	if err := checkIDs(wire.CodeUpdatePermissions, user); err != nil {
		return err
	}
	return c.do(ctx, wire.CodeUpdatePermissions, wire.AppendUpdatePermissions(nil, user, perms), nil)
}

// ChangePassword changes a user's password.
func (c commands) ChangePassword(ctx context.Context, user Identifier, current, next string) error {
	if err := checkIDs(wire.CodeChangePassword, user); err != nil {
		return err
	}
	for _, p := range []string{current, next} {
		if err := wire.CheckName("password", p); err != nil {
			return invalid(wire.CodeChangePassword, err)
		}
	}
	return c.do(ctx, wire.CodeChangePassword, wire.AppendChangePassword(nil, user, current, next), nil)
}

// CreatePAT creates a personal access token for the logged-in user and returns the token,
// which the server shows only once. expiryMicros 0 means the server default (no expiry).
func (c commands) CreatePAT(ctx context.Context, name string, expiryMicros uint64) (string, error) {
	if err := wire.CheckName("token name", name); err != nil {
		return "", invalid(wire.CodeCreatePAT, err)
	}
	var token string
	err := c.do(ctx, wire.CodeCreatePAT, wire.AppendCreatePAT(nil, name, expiryMicros), func(b []byte) (err error) {
		token, err = wire.DecodeRawToken(b)
		return err
	})
	return token, err
}

// GetPATs lists the logged-in user's personal access tokens.
func (c commands) GetPATs(ctx context.Context) ([]PersonalAccessToken, error) {
	var p []PersonalAccessToken
	err := c.do(ctx, wire.CodeGetPATs, nil, func(b []byte) (err error) { p, err = wire.DecodePATs(b); return err })
	return p, err
}

// DeletePAT deletes a personal access token by name.
func (c commands) DeletePAT(ctx context.Context, name string) error {
	if err := wire.CheckName("token name", name); err != nil {
		return invalid(wire.CodeDeletePAT, err)
	}
	return c.do(ctx, wire.CodeDeletePAT, wire.AppendDeletePAT(nil, name), nil)
}
