package wire

// Request decoders only a server needs (the gateway's client never sends these commands).

// DecodeUpdateStream decodes an UpdateStream body: [stream][name][options]. options is the
// (validated) options block.
func DecodeUpdateStream(body []byte) (stream Identifier, name string, options []byte, err error) {
	r := NewReader(body)
	stream, name = r.Identifier("stream id"), r.Name("stream name")
	if err := r.Err(); err != nil {
		return stream, name, nil, err
	}
	options = r.Rest()
	return stream, name, options, ParseOptions(options, func(string, uint8, []byte) error { return nil })
}

// UpdateUserRequest is the body of UpdateUser; nil fields stay unchanged.
type UpdateUserRequest struct {
	User     Identifier
	Username *string
	Status   *uint8
}

// DecodeUpdateUser decodes an UpdateUser body:
// [user][has_username:u8][name?][has_status:u8][status?][options]. options is the (validated)
// options block.
func DecodeUpdateUser(body []byte) (u UpdateUserRequest, options []byte, err error) {
	r := NewReader(body)
	u.User = r.Identifier("user id")
	if r.Bool("has username") {
		name := r.Name("username")
		u.Username = &name
	}
	if r.Bool("has status") {
		status := r.U8("status")
		u.Status = &status
	}
	if err := r.Err(); err != nil {
		return u, nil, err
	}
	options = r.Rest()
	return u, options, ParseOptions(options, func(string, uint8, []byte) error { return nil })
}

// TopicOptionsBlock returns the options block of a CreateTopic or UpdateTopic body (what
// follows [stream][(topic)][partitions count or nothing][name]), for settings that
// DecodeTopicOptions validates but does not return.
func TopicOptionsBlock(body []byte, create bool) []byte {
	r := NewReader(body)
	r.Identifier("stream id")
	if create {
		r.U32("partitions count")
	} else {
		r.Identifier("topic id")
	}
	r.Name("topic name")
	if r.Err() != nil {
		return nil
	}
	return r.Rest()
}
