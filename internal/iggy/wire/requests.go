package wire

// Request bodies of Iggy's binary protocol 0.11.0. Each Append* has a Decode* twin for the server. Simple
// bodies that are only identifiers use AppendIdentifiers / DecodeIdentifiers.

// Ack levels of the consumer-offset writes.
const (
	AckNone   uint8 = 0 // leader-local
	AckQuorum uint8 = 1 // replicated (the SDK default)
)

// AppendIdentifiers appends identifiers back to back (GetStream, DeleteTopic, Join..., ...).
func AppendIdentifiers(dst []byte, ids ...Identifier) []byte {
	for _, id := range ids {
		dst = AppendIdentifier(dst, id)
	}
	return dst
}

// DecodeIdentifiers decodes a body that is exactly len(ids) identifiers into ids.
func DecodeIdentifiers(body []byte, ids ...*Identifier) error {
	r := NewReader(body)
	for _, id := range ids {
		*id = r.Identifier("identifier")
	}
	return r.Done("identifiers")
}

// AppendCreateStream appends a CreateStream body: [name] with no options.
func AppendCreateStream(dst []byte, name string) []byte { return AppendName(dst, name) }

// DecodeCreateStream decodes a CreateStream body; options is the (validated) options block.
func DecodeCreateStream(body []byte) (name string, options []byte, err error) {
	r := NewReader(body)
	name = r.Name("stream name")
	if err := r.Err(); err != nil {
		return "", nil, err
	}
	options = r.Rest()
	return name, options, ParseOptions(options, func(string, uint8, []byte) error { return nil })
}

// CreateTopicRequest is the body of CreateTopic.
type CreateTopicRequest struct {
	Stream          Identifier
	PartitionsCount uint32
	Name            string
	Options         TopicOptions
}

// AppendCreateTopic appends a CreateTopic body.
func AppendCreateTopic(dst []byte, c *CreateTopicRequest) []byte {
	dst = AppendIdentifier(dst, c.Stream)
	dst = le.AppendUint32(dst, c.PartitionsCount)
	dst = AppendName(dst, c.Name)
	return AppendTopicOptions(dst, c.Options)
}

// DecodeCreateTopic decodes a CreateTopic body.
func DecodeCreateTopic(body []byte) (CreateTopicRequest, error) {
	r := NewReader(body)
	c := CreateTopicRequest{Stream: r.Identifier("stream id"), PartitionsCount: r.U32("partitions count"), Name: r.Name("topic name")}
	if err := r.Err(); err != nil {
		return c, err
	}
	var err error
	c.Options, err = DecodeTopicOptions(r.Rest(), true)
	return c, err
}

// UpdateTopicRequest is the body of UpdateTopic.
type UpdateTopicRequest struct {
	Stream, Topic Identifier
	Name          string
	Options       TopicOptions
}

// AppendUpdateTopic appends an UpdateTopic body.
func AppendUpdateTopic(dst []byte, u *UpdateTopicRequest) []byte {
	dst = AppendIdentifiers(dst, u.Stream, u.Topic)
	dst = AppendName(dst, u.Name)
	return AppendTopicOptions(dst, u.Options)
}

// DecodeUpdateTopic decodes an UpdateTopic body.
func DecodeUpdateTopic(body []byte) (UpdateTopicRequest, error) {
	r := NewReader(body)
	u := UpdateTopicRequest{Stream: r.Identifier("stream id"), Topic: r.Identifier("topic id"), Name: r.Name("topic name")}
	if err := r.Err(); err != nil {
		return u, err
	}
	var err error
	u.Options, err = DecodeTopicOptions(r.Rest(), false)
	return u, err
}

// AppendPartitionsChange appends a CreatePartitions / DeletePartitions body.
func AppendPartitionsChange(dst []byte, stream, topic Identifier, count uint32) []byte {
	return le.AppendUint32(AppendIdentifiers(dst, stream, topic), count)
}

// DecodePartitionsChange decodes a CreatePartitions / DeletePartitions body.
func DecodePartitionsChange(body []byte) (stream, topic Identifier, count uint32, err error) {
	r := NewReader(body)
	stream, topic, count = r.Identifier("stream id"), r.Identifier("topic id"), r.U32("partitions count")
	return stream, topic, count, r.Done("partitions")
}

// AppendCreateConsumerGroup appends a CreateConsumerGroup body.
func AppendCreateConsumerGroup(dst []byte, stream, topic Identifier, name string) []byte {
	return AppendName(AppendIdentifiers(dst, stream, topic), name)
}

// DecodeCreateConsumerGroup decodes a CreateConsumerGroup body.
func DecodeCreateConsumerGroup(body []byte) (stream, topic Identifier, name string, err error) {
	r := NewReader(body)
	stream, topic, name = r.Identifier("stream id"), r.Identifier("topic id"), r.Name("group name")
	return stream, topic, name, r.Done("create consumer group")
}

// SendMessagesRequest is the decoded prefix of a SendMessages body; Batch is the canonical
// batch that follows it (checked with VerifyBatch).
type SendMessagesRequest struct {
	Stream, Topic Identifier
	Partitioning  Partitioning
	MessagesCount uint32
	Batch         []byte
}

// AppendSendMessagesPrefix appends the part of a SendMessages body before the batch:
// [metadata_length:u32][stream][topic][partitioning: partition id][messages_count:u32].
func AppendSendMessagesPrefix(dst []byte, stream, topic Identifier, partition uint32, count uint32) []byte {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = AppendIdentifiers(dst, stream, topic)
	dst = AppendPartitionID(dst, partition)
	dst = le.AppendUint32(dst, count)
	le.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

// DecodeSendMessages decodes a SendMessages body. The metadata length must match the fields
// it covers, and messages_count must match the batch header's count.
func DecodeSendMessages(body []byte) (SendMessagesRequest, error) {
	r := NewReader(body)
	meta := r.LongBytes("send metadata")
	m := NewReader(meta)
	s := SendMessagesRequest{
		Stream:        m.Identifier("stream id"),
		Topic:         m.Identifier("topic id"),
		Partitioning:  m.Partitioning("partitioning"),
		MessagesCount: m.U32("messages count"),
	}
	r.Fail(m.Done("send metadata"))
	if err := r.Err(); err != nil {
		return s, err
	}
	s.Batch = r.Rest()
	h, err := DecodeBatchHeader(s.Batch)
	if err != nil {
		return s, err
	}
	if h.MessageCount != s.MessagesCount {
		return s, formatErr(codeInvalidFormat, "messages count %d, batch holds %d", s.MessagesCount, h.MessageCount)
	}
	return s, nil
}

// AppendPollRequest appends a PollMessages body.
func AppendPollRequest(dst []byte, p *PollRequest) []byte {
	dst = AppendConsumer(dst, p.Consumer)
	dst = AppendIdentifiers(dst, p.Stream, p.Topic)
	dst = AppendOptionalPartition(dst, p.Partition)
	dst = AppendPollingStrategy(dst, p.Strategy)
	dst = le.AppendUint32(dst, p.Count)
	return appendBools(dst, p.AutoCommit)
}

// DecodePollRequest decodes a PollMessages body.
func DecodePollRequest(body []byte) (PollRequest, error) {
	r := NewReader(body)
	p := PollRequest{
		Consumer:  r.Consumer("consumer"),
		Stream:    r.Identifier("stream id"),
		Topic:     r.Identifier("topic id"),
		Partition: r.OptionalPartition("partition"),
		Strategy:  r.PollingStrategy("polling strategy"),
		Count:     r.U32("count"),
	}
	p.AutoCommit = r.Bool("auto commit")
	return p, r.Done("poll messages")
}

// OffsetRequest is the body of Get/Store/DeleteConsumerOffset. Offset is only carried by
// Store and Ack only by Store and Delete.
type OffsetRequest struct {
	Consumer      Consumer
	Stream, Topic Identifier
	Partition     *uint32
	Offset        uint64
	Ack           uint8
}

func appendOffsetTarget(dst []byte, o *OffsetRequest) []byte {
	dst = AppendConsumer(dst, o.Consumer)
	dst = AppendIdentifiers(dst, o.Stream, o.Topic)
	return AppendOptionalPartition(dst, o.Partition)
}

func (r *Reader) offsetTarget() OffsetRequest {
	return OffsetRequest{
		Consumer:  r.Consumer("consumer"),
		Stream:    r.Identifier("stream id"),
		Topic:     r.Identifier("topic id"),
		Partition: r.OptionalPartition("partition"),
	}
}

// AppendGetConsumerOffset appends a GetConsumerOffset body.
func AppendGetConsumerOffset(dst []byte, o *OffsetRequest) []byte {
	return appendOffsetTarget(dst, o)
}

// DecodeGetConsumerOffset decodes a GetConsumerOffset body.
func DecodeGetConsumerOffset(body []byte) (OffsetRequest, error) {
	r := NewReader(body)
	o := r.offsetTarget()
	return o, r.Done("get consumer offset")
}

// AppendStoreConsumerOffset appends a StoreConsumerOffset body.
func AppendStoreConsumerOffset(dst []byte, o *OffsetRequest) []byte {
	dst = le.AppendUint64(appendOffsetTarget(dst, o), o.Offset)
	return append(dst, o.Ack)
}

// DecodeStoreConsumerOffset decodes a StoreConsumerOffset body.
func DecodeStoreConsumerOffset(body []byte) (OffsetRequest, error) {
	r := NewReader(body)
	o := r.offsetTarget()
	o.Offset = r.U64("offset")
	o.Ack = r.U8("ack")
	return o, r.Done("store consumer offset")
}

// AppendDeleteConsumerOffset appends a DeleteConsumerOffset body.
func AppendDeleteConsumerOffset(dst []byte, o *OffsetRequest) []byte {
	return append(appendOffsetTarget(dst, o), o.Ack)
}

// DecodeDeleteConsumerOffset decodes a DeleteConsumerOffset body.
func DecodeDeleteConsumerOffset(body []byte) (OffsetRequest, error) {
	r := NewReader(body)
	o := r.offsetTarget()
	o.Ack = r.U8("ack")
	return o, r.Done("delete consumer offset")
}

// CreateUserRequest is the body of CreateUser.
type CreateUserRequest struct {
	Username    string
	Password    string
	Status      uint8
	Permissions *Permissions
}

// AppendCreateUser appends a CreateUser body (no options).
func AppendCreateUser(dst []byte, c *CreateUserRequest) []byte {
	dst = AppendName(dst, c.Username)
	dst = append(dst, byte(len(c.Password)))
	dst = append(dst, c.Password...)
	dst = append(dst, c.Status)
	return appendOptionalPermissions(dst, c.Permissions)
}

// DecodeCreateUser decodes a CreateUser body; options is the (validated) options block.
func DecodeCreateUser(body []byte) (c CreateUserRequest, options []byte, err error) {
	r := NewReader(body)
	c.Username = r.Name("username")
	c.Password = string(r.ShortBytes("password"))
	c.Status = r.U8("status")
	c.Permissions = r.optionalPermissions()
	if err := r.Err(); err != nil {
		return c, nil, err
	}
	options = r.Rest()
	return c, options, ParseOptions(options, func(string, uint8, []byte) error { return nil })
}

// appendOptionalPermissions appends [0] or [1][len:u32][Permissions].
func appendOptionalPermissions(dst []byte, p *Permissions) []byte {
	if p == nil {
		return append(dst, 0)
	}
	dst = append(dst, 1, 0, 0, 0, 0)
	at := len(dst)
	dst = AppendPermissions(dst, p)
	le.PutUint32(dst[at-4:], uint32(len(dst)-at))
	return dst
}

func (r *Reader) optionalPermissions() *Permissions {
	if !r.Bool("has permissions") {
		return nil
	}
	b := r.LongBytes("permissions")
	if r.err != nil {
		return nil
	}
	p, err := DecodePermissions(b)
	r.Fail(err)
	return p
}

// AppendUpdatePermissions appends an UpdatePermissions body.
func AppendUpdatePermissions(dst []byte, user Identifier, p *Permissions) []byte {
	return appendOptionalPermissions(AppendIdentifier(dst, user), p)
}

// DecodeUpdatePermissions decodes an UpdatePermissions body.
func DecodeUpdatePermissions(body []byte) (user Identifier, p *Permissions, err error) {
	r := NewReader(body)
	user = r.Identifier("user id")
	p = r.optionalPermissions()
	return user, p, r.Done("update permissions")
}

// AppendChangePassword appends a ChangePassword body.
func AppendChangePassword(dst []byte, user Identifier, current, next string) []byte {
	dst = AppendIdentifier(dst, user)
	dst = append(dst, byte(len(current)))
	dst = append(dst, current...)
	dst = append(dst, byte(len(next)))
	return append(dst, next...)
}

// DecodeChangePassword decodes a ChangePassword body.
func DecodeChangePassword(body []byte) (user Identifier, current, next string, err error) {
	r := NewReader(body)
	user = r.Identifier("user id")
	current = string(r.ShortBytes("current password"))
	next = string(r.ShortBytes("new password"))
	return user, current, next, r.Done("change password")
}

// AppendCreatePAT appends a CreatePAT body: [name][expiry:u64 µs; 0 = server default].
func AppendCreatePAT(dst []byte, name string, expiry uint64) []byte {
	return le.AppendUint64(AppendName(dst, name), expiry)
}

// DecodeCreatePAT decodes a CreatePAT body.
func DecodeCreatePAT(body []byte) (name string, expiry uint64, err error) {
	r := NewReader(body)
	name, expiry = r.Name("token name"), r.U64("token expiry")
	return name, expiry, r.Done("create token")
}

// AppendDeletePAT appends a DeletePAT body: [name].
func AppendDeletePAT(dst []byte, name string) []byte { return AppendName(dst, name) }

// DecodeDeletePAT decodes a DeletePAT body.
func DecodeDeletePAT(body []byte) (string, error) {
	r := NewReader(body)
	name := r.Name("token name")
	return name, r.Done("delete token")
}
