package wire

import "encoding/binary"

// Response payloads of Iggy's binary protocol 0.11.0. Each Append* has a Decode* twin; list replies that run to
// the end of the body decode until the input is used up, so every element consumes input and
// the result's size is bounded by the body's.

var le = binary.LittleEndian

// Minimum encoded sizes, used to bound counts before allocating.
const (
	partitionSize      = 40
	minTopicHeaderSize = 4 + 8 + 4 + 8 + 1 + 8 + 8 + 8 + 2 + 4 + 4
	groupMemberMinSize = 8
	sendConfirmSize    = 20
)

// AppendStream appends a StreamResponse (with an empty options block).
func AppendStream(dst []byte, s *Stream) []byte {
	dst = le.AppendUint32(dst, s.ID)
	dst = le.AppendUint64(dst, s.CreatedAt)
	dst = le.AppendUint32(dst, s.TopicsCount)
	dst = le.AppendUint64(dst, s.SizeBytes)
	dst = le.AppendUint64(dst, s.MessagesCount)
	dst = AppendName(dst, s.Name)
	return le.AppendUint32(dst, 0)
}

func (r *Reader) stream() Stream {
	s := Stream{
		ID:            r.U32("stream id"),
		CreatedAt:     r.U64("stream created at"),
		TopicsCount:   r.U32("topics count"),
		SizeBytes:     r.U64("stream size"),
		MessagesCount: r.U64("stream messages"),
		Name:          r.Name("stream name"),
	}
	r.LongBytes("stream options")
	return s
}

// AppendStreamDetails appends a GetStream reply: the stream, then a TopicHeader for each of
// s.Topics (TopicsCount is written as len(s.Topics)).
func AppendStreamDetails(dst []byte, s *Stream) []byte {
	c := *s
	c.TopicsCount = uint32(len(s.Topics))
	dst = AppendStream(dst, &c)
	for i := range s.Topics {
		dst = AppendTopicHeader(dst, &s.Topics[i])
	}
	return dst
}

// DecodeStreamDetails decodes a GetStream reply (a StreamResponse followed by its topics) or a
// CreateStream payload (no topics).
func DecodeStreamDetails(b []byte) (*Stream, error) {
	r := NewReader(b)
	s := r.stream()
	if r.Err() == nil && uint64(s.TopicsCount)*minTopicHeaderSize > uint64(r.Len()) {
		r.Fail(truncated("stream topics", int(s.TopicsCount)*minTopicHeaderSize, r.Len()))
	}
	if r.Err() == nil && s.TopicsCount > 0 {
		s.Topics = make([]Topic, s.TopicsCount)
		for i := range s.Topics {
			s.Topics[i] = r.topicHeader()
		}
	}
	if err := r.Done("stream"); err != nil {
		return nil, err
	}
	return &s, nil
}

// AppendStreams appends a GetStreams reply.
func AppendStreams(dst []byte, streams []Stream) []byte {
	for i := range streams {
		dst = AppendStream(dst, &streams[i])
	}
	return dst
}

// DecodeStreams decodes a GetStreams reply.
func DecodeStreams(b []byte) ([]Stream, error) {
	r := NewReader(b)
	var out []Stream
	for r.Len() > 0 && r.Err() == nil {
		out = append(out, r.stream())
	}
	return out, r.Err()
}

// AppendTopicHeader appends a TopicHeader; its options blocks carry t.Options and
// t.DerivedOptions.
func AppendTopicHeader(dst []byte, t *Topic) []byte {
	dst = le.AppendUint32(dst, t.ID)
	dst = le.AppendUint64(dst, t.CreatedAt)
	dst = le.AppendUint32(dst, t.PartitionsCount)
	dst = le.AppendUint64(dst, t.MessageExpiry)
	dst = append(dst, t.Compression)
	dst = le.AppendUint64(dst, t.MaxTopicSize)
	dst = le.AppendUint64(dst, t.SizeBytes)
	dst = le.AppendUint64(dst, t.MessagesCount)
	dst = AppendName(dst, t.Name)
	dst = appendLongOptions(dst, t.Options)
	return appendLongOptions(dst, t.DerivedOptions)
}

// appendLongOptions appends [len:u32][options block].
func appendLongOptions(dst []byte, o TopicOptions) []byte {
	at := len(dst)
	dst = AppendTopicOptions(le.AppendUint32(dst, 0), o)
	le.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

func (r *Reader) topicHeader() Topic {
	t := Topic{
		ID:              r.U32("topic id"),
		CreatedAt:       r.U64("topic created at"),
		PartitionsCount: r.U32("partitions count"),
		MessageExpiry:   r.U64("message expiry"),
		Compression:     r.U8("compression"),
		MaxTopicSize:    r.U64("max topic size"),
		SizeBytes:       r.U64("topic size"),
		MessagesCount:   r.U64("topic messages"),
		Name:            r.Name("topic name"),
	}
	t.Options = DecodeReportedTopicOptions(r.LongBytes("topic options"))
	t.DerivedOptions = DecodeReportedTopicOptions(r.LongBytes("topic derived options"))
	return t
}

// AppendTopicDetails appends a GetTopic reply (also the CreateTopic payload): the TopicHeader,
// then a PartitionResponse for each of t.Partitions (PartitionsCount is written as
// len(t.Partitions)).
func AppendTopicDetails(dst []byte, t *Topic) []byte {
	c := *t
	c.PartitionsCount = uint32(len(t.Partitions))
	dst = AppendTopicHeader(dst, &c)
	for i := range t.Partitions {
		dst = AppendPartition(dst, &t.Partitions[i])
	}
	return dst
}

// DecodeTopicDetails decodes a GetTopic reply or CreateTopic payload.
func DecodeTopicDetails(b []byte) (*Topic, error) {
	r := NewReader(b)
	t := r.topicHeader()
	if r.Err() == nil && uint64(t.PartitionsCount)*partitionSize != uint64(r.Len()) {
		r.Fail(formatErr(codeInvalidFormat, "topic with %d partitions has %d partition bytes", t.PartitionsCount, r.Len()))
	}
	if r.Err() == nil && t.PartitionsCount > 0 {
		t.Partitions = make([]Partition, t.PartitionsCount)
		for i := range t.Partitions {
			t.Partitions[i] = r.partition()
		}
	}
	if err := r.Done("topic"); err != nil {
		return nil, err
	}
	return &t, nil
}

// AppendTopics appends a GetTopics reply: [count:u32] then TopicHeaders.
func AppendTopics(dst []byte, topics []Topic) []byte {
	dst = le.AppendUint32(dst, uint32(len(topics)))
	for i := range topics {
		dst = AppendTopicHeader(dst, &topics[i])
	}
	return dst
}

// DecodeTopics decodes a GetTopics reply; an empty body means no topics.
func DecodeTopics(b []byte) ([]Topic, error) {
	if len(b) == 0 {
		return nil, nil
	}
	r := NewReader(b)
	n := r.Count("topics", minTopicHeaderSize)
	var out []Topic
	if n > 0 {
		out = make([]Topic, n)
		for i := range out {
			out[i] = r.topicHeader()
		}
	}
	if err := r.Done("topics"); err != nil {
		return nil, err
	}
	return out, nil
}

// AppendPartition appends a 40-byte PartitionResponse.
func AppendPartition(dst []byte, p *Partition) []byte {
	dst = le.AppendUint32(dst, p.ID)
	dst = le.AppendUint64(dst, p.CreatedAt)
	dst = le.AppendUint32(dst, p.SegmentsCount)
	dst = le.AppendUint64(dst, p.CurrentOffset)
	dst = le.AppendUint64(dst, p.SizeBytes)
	return le.AppendUint64(dst, p.MessagesCount)
}

func (r *Reader) partition() Partition {
	return Partition{
		ID:            r.U32("partition id"),
		CreatedAt:     r.U64("partition created at"),
		SegmentsCount: r.U32("segments count"),
		CurrentOffset: r.U64("current offset"),
		SizeBytes:     r.U64("partition size"),
		MessagesCount: r.U64("partition messages"),
	}
}

// AppendConsumerGroup appends a GetConsumerGroup reply (also the CreateConsumerGroup
// payload): the group header, then each member (MembersCount is written as len(g.Members)).
func AppendConsumerGroup(dst []byte, g *ConsumerGroup) []byte {
	dst = appendGroupHeader(dst, g, uint32(len(g.Members)))
	for _, m := range g.Members {
		dst = le.AppendUint32(dst, m.ID)
		dst = le.AppendUint32(dst, uint32(len(m.Partitions)))
		for _, p := range m.Partitions {
			dst = le.AppendUint32(dst, p)
		}
	}
	return dst
}

func appendGroupHeader(dst []byte, g *ConsumerGroup, members uint32) []byte {
	dst = le.AppendUint32(dst, g.ID)
	dst = le.AppendUint32(dst, g.PartitionsCount)
	dst = le.AppendUint32(dst, members)
	return AppendName(dst, g.Name)
}

func (r *Reader) groupHeader() ConsumerGroup {
	return ConsumerGroup{
		ID:              r.U32("group id"),
		PartitionsCount: r.U32("group partitions"),
		MembersCount:    r.U32("group members"),
		Name:            r.Name("group name"),
	}
}

// DecodeConsumerGroup decodes a GetConsumerGroup reply or CreateConsumerGroup payload. An
// empty payload (the crate's "Empty" create response) decodes as nil.
func DecodeConsumerGroup(b []byte) (*ConsumerGroup, error) {
	if len(b) == 0 {
		return nil, nil
	}
	r := NewReader(b)
	g := r.groupHeader()
	if r.Err() == nil && uint64(g.MembersCount)*groupMemberMinSize > uint64(r.Len()) {
		r.Fail(truncated("group members", int(g.MembersCount)*groupMemberMinSize, r.Len()))
	}
	if r.Err() == nil && g.MembersCount > 0 {
		g.Members = make([]ConsumerGroupMember, g.MembersCount)
		for i := range g.Members {
			g.Members[i].ID = r.U32("member id")
			g.Members[i].Partitions = r.u32List("member partitions")
		}
	}
	if err := r.Done("consumer group"); err != nil {
		return nil, err
	}
	return &g, nil
}

// AppendConsumerGroups appends a GetConsumerGroups reply: group headers to the end.
func AppendConsumerGroups(dst []byte, groups []ConsumerGroup) []byte {
	for i := range groups {
		dst = appendGroupHeader(dst, &groups[i], groups[i].MembersCount)
	}
	return dst
}

// DecodeConsumerGroups decodes a GetConsumerGroups reply.
func DecodeConsumerGroups(b []byte) ([]ConsumerGroup, error) {
	r := NewReader(b)
	var out []ConsumerGroup
	for r.Len() > 0 && r.Err() == nil {
		out = append(out, r.groupHeader())
	}
	return out, r.Err()
}

// u32List reads [count:u32] then count × u32.
func (r *Reader) u32List(what string) []uint32 {
	n := r.Count(what, 4)
	if n == 0 {
		return nil
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = r.U32(what)
	}
	return out
}

// AppendGroupAssignment appends a SyncConsumerGroup reply.
func AppendGroupAssignment(dst []byte, a *GroupAssignment) []byte {
	dst = le.AppendUint64(dst, a.Generation)
	dst = le.AppendUint32(dst, uint32(len(a.Partitions)))
	for _, p := range a.Partitions {
		dst = le.AppendUint32(dst, p)
	}
	return dst
}

// DecodeGroupAssignment decodes a SyncConsumerGroup reply.
func DecodeGroupAssignment(b []byte) (*GroupAssignment, error) {
	r := NewReader(b)
	a := GroupAssignment{Generation: r.U64("generation")}
	a.Partitions = r.u32List("assigned partitions")
	if err := r.Done("group assignment"); err != nil {
		return nil, err
	}
	return &a, nil
}

// AppendUser appends a UserResponse (with an empty options block).
func AppendUser(dst []byte, u *User) []byte {
	dst = le.AppendUint32(dst, u.ID)
	dst = le.AppendUint64(dst, u.CreatedAt)
	dst = append(dst, u.Status)
	dst = AppendName(dst, u.Username)
	return le.AppendUint32(dst, 0)
}

func (r *Reader) user() User {
	u := User{
		ID:        r.U32("user id"),
		CreatedAt: r.U64("user created at"),
		Status:    r.U8("user status"),
		Username:  r.Name("username"),
	}
	r.LongBytes("user options")
	return u
}

// AppendUserDetails appends a GetUser reply (also the CreateUser payload): the UserResponse,
// then [1][len:u32][Permissions] or, without permissions, four zero bytes.
func AppendUserDetails(dst []byte, u *User) []byte {
	dst = AppendUser(dst, u)
	if u.Permissions == nil {
		return le.AppendUint32(dst, 0)
	}
	return appendOptionalPermissions(dst, u.Permissions)
}

// DecodeUserDetails decodes a GetUser reply or CreateUser payload.
func DecodeUserDetails(b []byte) (*User, error) {
	r := NewReader(b)
	u := r.user()
	if r.Bool("has permissions") {
		p := r.LongBytes("permissions")
		if r.Err() == nil {
			perms, err := DecodePermissions(p)
			r.Fail(err)
			u.Permissions = perms
		}
	} else {
		r.Bytes(3, "no permissions")
	}
	if err := r.Done("user"); err != nil {
		return nil, err
	}
	return &u, nil
}

// AppendUsers appends a GetUsers reply.
func AppendUsers(dst []byte, users []User) []byte {
	for i := range users {
		dst = AppendUser(dst, &users[i])
	}
	return dst
}

// DecodeUsers decodes a GetUsers reply.
func DecodeUsers(b []byte) ([]User, error) {
	r := NewReader(b)
	var out []User
	for r.Len() > 0 && r.Err() == nil {
		out = append(out, r.user())
	}
	return out, r.Err()
}

// AppendMe appends a GetMe reply (ClientDetails).
func AppendMe(dst []byte, m *Me) []byte {
	dst = le.AppendUint32(dst, m.ClientID)
	dst = le.AppendUint32(dst, m.UserID)
	dst = append(dst, m.Transport)
	dst = le.AppendUint32(dst, uint32(len(m.Address)))
	dst = append(dst, m.Address...)
	dst = le.AppendUint32(dst, uint32(len(m.ConsumerGroups)))
	for _, g := range m.ConsumerGroups {
		dst = le.AppendUint32(dst, g.StreamID)
		dst = le.AppendUint32(dst, g.TopicID)
		dst = le.AppendUint32(dst, g.GroupID)
	}
	return dst
}

// DecodeMe decodes a GetMe reply.
func DecodeMe(b []byte) (*Me, error) {
	r := NewReader(b)
	m := Me{ClientID: r.U32("client id"), UserID: r.U32("user id"), Transport: r.U8("transport")}
	m.Address = string(r.LongBytes("address"))
	if n := r.Count("consumer groups", 12); n > 0 {
		m.ConsumerGroups = make([]MeGroup, n)
		for i := range m.ConsumerGroups {
			m.ConsumerGroups[i] = MeGroup{StreamID: r.U32("stream id"), TopicID: r.U32("topic id"), GroupID: r.U32("group id")}
		}
	}
	if err := r.Done("client details"); err != nil {
		return nil, err
	}
	return &m, nil
}

// AppendClusterMetadata appends a GetClusterMetadata reply.
func AppendClusterMetadata(dst []byte, c *ClusterMetadata) []byte {
	dst = le.AppendUint32(dst, uint32(len(c.Name)))
	dst = append(dst, c.Name...)
	dst = le.AppendUint32(dst, uint32(len(c.Nodes)))
	for _, n := range c.Nodes {
		dst = le.AppendUint32(dst, uint32(len(n.Name)))
		dst = append(dst, n.Name...)
		dst = le.AppendUint32(dst, uint32(len(n.IP)))
		dst = append(dst, n.IP...)
		dst = le.AppendUint16(dst, n.TCPPort)
		dst = le.AppendUint16(dst, n.QUICPort)
		dst = le.AppendUint16(dst, n.HTTPPort)
		dst = le.AppendUint16(dst, n.WSPort)
		dst = append(dst, n.Role, n.Status)
	}
	return dst
}

// DecodeClusterMetadata decodes a GetClusterMetadata reply.
func DecodeClusterMetadata(b []byte) (*ClusterMetadata, error) {
	r := NewReader(b)
	c := ClusterMetadata{Name: string(r.LongBytes("cluster name"))}
	if n := r.Count("cluster nodes", 18); n > 0 {
		c.Nodes = make([]ClusterNode, n)
		for i := range c.Nodes {
			c.Nodes[i] = ClusterNode{
				Name:     string(r.LongBytes("node name")),
				IP:       string(r.LongBytes("node ip")),
				TCPPort:  r.U16("tcp port"),
				QUICPort: r.U16("quic port"),
				HTTPPort: r.U16("http port"),
				WSPort:   r.U16("websocket port"),
				Role:     r.U8("node role"),
				Status:   r.U8("node status"),
			}
		}
	}
	if err := r.Done("cluster metadata"); err != nil {
		return nil, err
	}
	return &c, nil
}

// AppendSendConfirmations appends a SendMessages reply.
func AppendSendConfirmations(dst []byte, cs []SendConfirmation) []byte {
	dst = le.AppendUint32(dst, uint32(len(cs)))
	for _, c := range cs {
		dst = le.AppendUint32(dst, c.StreamID)
		dst = le.AppendUint32(dst, c.TopicID)
		dst = le.AppendUint32(dst, c.PartitionID)
		dst = le.AppendUint64(dst, c.BaseOffset)
	}
	return dst
}

// DecodeSendConfirmations decodes a SendMessages reply.
func DecodeSendConfirmations(b []byte) ([]SendConfirmation, error) {
	r := NewReader(b)
	n := r.Count("send confirmations", sendConfirmSize)
	var out []SendConfirmation
	if n > 0 {
		out = make([]SendConfirmation, n)
		for i := range out {
			out[i] = SendConfirmation{
				StreamID:    r.U32("stream id"),
				TopicID:     r.U32("topic id"),
				PartitionID: r.U32("partition id"),
				BaseOffset:  r.U64("base offset"),
			}
		}
	}
	if err := r.Done("send confirmations"); err != nil {
		return nil, err
	}
	return out, nil
}

// AppendConsumerOffset appends a GetConsumerOffset reply.
func AppendConsumerOffset(dst []byte, o *ConsumerOffset) []byte {
	dst = le.AppendUint32(dst, o.PartitionID)
	dst = le.AppendUint64(dst, o.CurrentOffset)
	return le.AppendUint64(dst, o.StoredOffset)
}

// DecodeConsumerOffset decodes a GetConsumerOffset reply; an empty body (nothing stored)
// decodes as nil.
func DecodeConsumerOffset(b []byte) (*ConsumerOffset, error) {
	if len(b) == 0 {
		return nil, nil
	}
	r := NewReader(b)
	o := ConsumerOffset{PartitionID: r.U32("partition id"), CurrentOffset: r.U64("current offset"), StoredOffset: r.U64("stored offset")}
	if err := r.Done("consumer offset"); err != nil {
		return nil, err
	}
	return &o, nil
}

// AppendPATs appends a GetPATs reply.
func AppendPATs(dst []byte, pats []PersonalAccessToken) []byte {
	for _, p := range pats {
		dst = AppendName(dst, p.Name)
		dst = le.AppendUint64(dst, p.ExpiryAt)
	}
	return dst
}

// DecodePATs decodes a GetPATs reply.
func DecodePATs(b []byte) ([]PersonalAccessToken, error) {
	r := NewReader(b)
	var out []PersonalAccessToken
	for r.Len() > 0 && r.Err() == nil {
		out = append(out, PersonalAccessToken{Name: r.Name("token name"), ExpiryAt: r.U64("token expiry")})
	}
	return out, r.Err()
}

// AppendRawToken appends a CreatePAT payload: [len:u8][token].
func AppendRawToken(dst []byte, token string) []byte { return AppendName(dst, token) }

// DecodeRawToken decodes a CreatePAT payload.
func DecodeRawToken(b []byte) (string, error) {
	r := NewReader(b)
	t := r.Name("token")
	return t, r.Done("token")
}
