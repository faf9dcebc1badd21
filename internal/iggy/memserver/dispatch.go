package memserver

import (
	"encoding/binary"
	"errors"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
	"github.com/zeebo/xxh3"
)

// serverVersion is the version advertised in the login reply.
const serverVersion = "0.9.0-memserver"

// handle answers one request; it returns false when the connection must be closed.
func (c *conn) handle(h *wire.RequestHeader, body []byte) bool {
	// A stamped request checksum must match the body (wire.rs verify_request_checksum).
	if h.RequestChecksum != ([16]byte{}) {
		var want [16]byte
		binary.LittleEndian.PutUint64(want[:], xxh3.Hash(body))
		if want != h.RequestChecksum {
			return c.reply(h, codeInvalidFormat) == nil
		}
	}
	sess := c.session()
	if cl := c.srv.cluster; cl != nil && !cl.admits(c.srv.index, h.Operation) && h.Operation != wire.OpNonReplicated {
		if done, ok := c.backup(h, sess, cl); done {
			return ok
		}
	}
	switch {
	case h.Operation == wire.OpNonReplicated:
		if h.Code == wire.CodeLoginUser || h.Code == wire.CodeLoginWithPAT {
			_ = c.evict(h.Client, wire.EvictMalformedLogin)
			return false
		}
		if sess == nil && h.Code != wire.CodePing {
			return c.reply(h, codeUnauthenticated) == nil
		}
		return c.nonReplicated(h, sess, body)
	case h.Operation == wire.OpRegister:
		return c.login(h, body)
	case h.Operation == wire.OpLogout:
		if sess != nil {
			c.srv.state.closeSession(sess)
		}
		err := c.reply(h, 0)
		c.setSession(nil)
		return err == nil
	case sess == nil:
		// A replicated request on a connection without a session: the client believes it
		// has one, so tell it the session is gone.
		_ = c.evict(h.Client, wire.EvictNoSession)
		return false
	case wire.IsPartitionOp(h.Operation):
		return c.partitionOp(h, sess, body)
	case h.Operation == wire.OpDeleteSegments:
		return c.reply(h, codeFeatureUnavailable) == nil
	default:
		return c.metadataOp(h, sess, body)
	}
}

// backup answers what a backup of a real cluster does not serve itself, and reports done; it
// leaves reads (served from the node's own replica, here the shared state) to the caller, and
// Register and Logout too while there is a primary (a real backup authenticates a login itself
// and forwards the commit to the primary: core/server/src/dispatch.rs,
// submit_register_local_or_forward). Metadata writes get the result-framed TransientNotAccepted
// of a node that is not primary (core/metadata submit_request_in_process), partition writes the
// status TransientNotAccepted of a non-primary partition replica (core/partitions
// iggy_partition.rs): "not admitted here, re-issue anywhere".
func (c *conn) backup(h *wire.RequestHeader, sess *session, cl *Cluster) (done, ok bool) {
	switch {
	case h.Operation == wire.OpRegister || h.Operation == wire.OpLogout:
		if cl.hasPrimary() {
			return false, false
		}
		if h.Operation == wire.OpLogout {
			return true, c.reply(h, codeTransientNotAccepted) == nil
		}
		// No primary to forward the login to.
		return true, c.reply(h, 0, wire.AppendResultError(nil, codeTransientNotAccepted)) == nil
	case sess == nil:
		return false, false // the caller evicts: there is no session to serve it on
	case wire.IsPartitionOp(h.Operation):
		return true, c.reply(h, codeTransientNotAccepted) == nil
	default:
		return true, c.reply(h, 0, wire.AppendResultError(nil, codeTransientNotAccepted)) == nil
	}
}

// login handles Register: version gate, then username/password or token. Failures evict.
func (c *conn) login(h *wire.RequestHeader, body []byte) bool {
	l, err := wire.DecodeLogin(body)
	if err != nil {
		r := wire.NewReader(body)
		v := r.U32("protocol version")
		r.Name("sdk name")
		r.Name("sdk version")
		reason := wire.EvictMalformedLogin
		if r.Err() == nil && !wire.VersionCompatible(v, wire.ProtocolVersion) {
			reason = wire.EvictIncompatibleProtocol
		}
		_ = c.evict(h.Client, reason)
		return false
	}
	if !wire.VersionCompatible(l.Version.ProtocolVersion, wire.ProtocolVersion) {
		_ = c.evict(h.Client, wire.EvictIncompatibleProtocol)
		return false
	}
	st := c.srv.state
	sess := c.session()
	if sess == nil {
		var uid uint32
		if l.Token != "" {
			var res int
			uid, res = st.authenticateToken(l.Token)
			switch res {
			case tokenInvalid:
				_ = c.evict(h.Client, wire.EvictInvalidToken)
				return false
			case tokenUserInactive:
				_ = c.evict(h.Client, wire.EvictUserInactive)
				return false
			}
		} else {
			var ok bool
			if uid, ok = st.authenticate(l.Username, l.Password); !ok {
				c.srv.log.Info("login rejected: invalid credentials", "username", l.Username)
				_ = c.evict(h.Client, wire.EvictInvalidCredentials)
				return false
			}
		}
		sess = st.openSession(uid, h.Client, c.nc.RemoteAddr().String())
		c.setSession(sess)
		c.srv.log.Info("client logged in", "session", sess.id, "user", uid,
			"sdk", l.Version.SDKName, "sdk_version", l.Version.SDKVersion)
	}
	c.out = wire.AppendResultOK(c.out[:0])
	c.out = wire.AppendLoginReply(c.out, wire.LoginReply{
		UserID:                sess.userID,
		Session:               sess.id,
		ServerProtocolVersion: wire.ProtocolVersion,
		ServerVersion:         serverVersion,
	})
	return c.reply(h, 0, c.out) == nil
}

// answer replies to a command whose reply is not result-framed: err travels as status.
func (c *conn) answer(h *wire.RequestHeader, err *opError, payload ...[]byte) bool {
	if err != nil {
		return c.reply(h, err.code) == nil
	}
	return c.reply(h, 0, payload...) == nil
}

// answerRF replies to a result-framed (metadata or offset-write) command: a denial travels as
// status, a committed rejection in the result section, a success as [0] plus payload.
func (c *conn) answerRF(h *wire.RequestHeader, err *opError, payload []byte) bool {
	switch {
	case err != nil && !err.rejected:
		return c.reply(h, err.code) == nil
	case err != nil:
		c.out = wire.AppendResultError(c.out[:0], err.code)
		return c.reply(h, 0, c.out) == nil
	}
	return c.reply(h, 0, wire.AppendResultOK(nil), payload) == nil
}

// decodeDenial is the status for a request body that does not decode: option errors keep
// their specific codes, anything else is InvalidCommand as on the real server.
func decodeDenial(err error) *opError {
	var fe *wire.FormatError
	if errors.As(err, &fe) {
		switch fe.Code {
		case codeUnsupportedOptionKey, codeInvalidOptionValue, 4043:
			return deny(fe.Code)
		}
	}
	return deny(codeInvalidCommand)
}
