package wire

import "encoding/binary"

// Permissions = [global: 10 × bool][has_streams:u8] { StreamPerm [has_next:u8] }*
// StreamPerm  = [stream_id:u32][6 × bool][has_topics:u8] { TopicPerm [has_next:u8] }*
// TopicPerm   = [topic_id:u32][4 × bool]

// AppendPermissions appends the encoding of p.
func AppendPermissions(dst []byte, p *Permissions) []byte {
	g := &p.Global
	dst = appendBools(dst, g.ManageServers, g.ReadServers, g.ManageUsers, g.ReadUsers,
		g.ManageStreams, g.ReadStreams, g.ManageTopics, g.ReadTopics, g.PollMessages, g.SendMessages)
	dst = appendBools(dst, len(p.Streams) > 0)
	for i := range p.Streams {
		s := &p.Streams[i]
		dst = binary.LittleEndian.AppendUint32(dst, s.StreamID)
		dst = appendBools(dst, s.ManageStream, s.ReadStream, s.ManageTopics, s.ReadTopics,
			s.PollMessages, s.SendMessages, len(s.Topics) > 0)
		for j := range s.Topics {
			t := &s.Topics[j]
			dst = binary.LittleEndian.AppendUint32(dst, t.TopicID)
			dst = appendBools(dst, t.ManageTopic, t.ReadTopic, t.PollMessages, t.SendMessages,
				j < len(s.Topics)-1)
		}
		dst = appendBools(dst, i < len(p.Streams)-1)
	}
	return dst
}

func appendBools(dst []byte, bs ...bool) []byte {
	for _, b := range bs {
		v := byte(0)
		if b {
			v = 1
		}
		dst = append(dst, v)
	}
	return dst
}

// Permissions reads an encoded Permissions. The list lengths are driven by has_next bytes,
// so each entry consumes input and the decoded size is bounded by the input size.
func (r *Reader) Permissions() *Permissions {
	p := &Permissions{}
	g := &p.Global
	for _, f := range []*bool{&g.ManageServers, &g.ReadServers, &g.ManageUsers, &g.ReadUsers,
		&g.ManageStreams, &g.ReadStreams, &g.ManageTopics, &g.ReadTopics, &g.PollMessages, &g.SendMessages} {
		*f = r.Bool("global permission")
	}
	for more := r.Bool("has streams"); more && r.err == nil; more = r.Bool("has next stream") {
		s := StreamPermissions{StreamID: r.U32("stream permission id")}
		for _, f := range []*bool{&s.ManageStream, &s.ReadStream, &s.ManageTopics, &s.ReadTopics,
			&s.PollMessages, &s.SendMessages} {
			*f = r.Bool("stream permission")
		}
		for more := r.Bool("has topics"); more && r.err == nil; more = r.Bool("has next topic") {
			t := TopicPermissions{TopicID: r.U32("topic permission id")}
			for _, f := range []*bool{&t.ManageTopic, &t.ReadTopic, &t.PollMessages, &t.SendMessages} {
				*f = r.Bool("topic permission")
			}
			s.Topics = append(s.Topics, t)
		}
		p.Streams = append(p.Streams, s)
	}
	if r.err != nil {
		return nil
	}
	return p
}

// DecodePermissions decodes a whole Permissions block.
func DecodePermissions(b []byte) (*Permissions, error) {
	r := NewReader(b)
	p := r.Permissions()
	if err := r.Done("permissions"); err != nil {
		return nil, err
	}
	return p, nil
}
