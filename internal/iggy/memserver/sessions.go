package memserver

import "github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"

// session is a logged-in connection. Its number is handed to the client in the login reply;
// consumer-group membership is tied to it.
type session struct {
	id       uint64
	clientID uint32 // the server's own id for the connection (GetMe)
	client   [16]byte
	userID   uint32
	address  string
}

// openSession binds a new session for a connection that logged in as userID.
func (s *state) openSession(userID uint32, client [16]byte, address string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastClientID++
	sess := &session{id: s.committed(), clientID: s.lastClientID, client: client, userID: userID, address: address}
	s.sessions[sess.id] = sess
	return sess
}

// closeSession ends a session (logout or disconnect) and releases its group memberships.
func (s *state) closeSession(sess *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sessions[sess.id]; !ok {
		return
	}
	delete(s.sessions, sess.id)
	s.releaseMembershipsLocked(sess.id)
	s.committed()
}

// me is GetMe (20).
func (s *state) me(sess *session) wire.Me {
	s.mu.Lock()
	defer s.mu.Unlock()
	return wire.Me{
		ClientID:       sess.clientID,
		UserID:         sess.userID,
		Transport:      1, // TCP
		Address:        sess.address,
		ConsumerGroups: s.membershipsLocked(sess.id),
	}
}
