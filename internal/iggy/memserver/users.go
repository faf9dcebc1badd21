package memserver

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strings"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// user is an Iggy user. Passwords are kept in memory as given: this server is for tests.
type user struct {
	id        uint32
	name      string
	password  string
	status    uint8
	createdAt uint64
	perms     *wire.Permissions
	pats      map[string]*pat // by token name
}

// pat is a personal access token; only its hash is kept.
type pat struct {
	name     string
	hash     [32]byte
	expiryAt uint64 // µs; 0 = never
}

type patRef struct {
	userID uint32
	name   string
}

// userView is a snapshot of a user for encoding; perms is nil when the user has none.
type userView struct {
	wire.User
}

func (u *user) view(withPerms bool) userView {
	v := userView{wire.User{ID: u.id, CreatedAt: u.createdAt, Status: u.status, Username: u.name}}
	if withPerms && u.perms != nil {
		p := clonePermissions(u.perms)
		v.Permissions = p
	}
	return v
}

func clonePermissions(p *wire.Permissions) *wire.Permissions {
	if p == nil {
		return nil
	}
	c := &wire.Permissions{Global: p.Global, Streams: slices.Clone(p.Streams)}
	for i := range c.Streams {
		c.Streams[i].Topics = slices.Clone(c.Streams[i].Topics)
	}
	return c
}

func (s *state) resolveUser(id wire.Identifier) *user {
	if id.IsName() {
		n, ok := s.userIndex[id.Name]
		if !ok {
			return nil
		}
		return s.users.get(n)
	}
	return s.users.get(id.Numeric)
}

// managedUser resolves the user a manage_users operation changes. Both failures are committed
// rejections, as for the other metadata operations (see metadataStream).
func (s *state) managedUser(sess *session, id wire.Identifier) (*user, *opError) {
	if err := s.grantsOf(sess).manageUsers(); err != nil {
		return nil, asRejection(err)
	}
	u := s.resolveUser(id)
	if u == nil {
		return nil, reject(codeResourceNotFound)
	}
	return u, nil
}

func validUsername(name string) bool {
	return len(name) >= minUsernameLength && len(name) <= maxUsernameLength
}

func validPassword(pw string) bool {
	return len(pw) >= minPasswordLength && len(pw) <= maxPasswordLength
}

// authenticate checks username and password as the real server's login does: out-of-range
// lengths, unknown users, wrong passwords and inactive users are all "invalid credentials".
func (s *state) authenticate(username, password string) (uint32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !validUsername(username) || !validPassword(password) {
		return 0, false
	}
	u := s.resolveUser(wire.Identifier{Name: username})
	if u == nil || u.password != password || u.status != wire.UserActive {
		return 0, false
	}
	return u.id, true
}

// Outcomes of authenticateToken.
const (
	tokenOK = iota
	tokenInvalid
	tokenUserInactive
)

// authenticateToken checks a personal access token.
func (s *state) authenticateToken(token string) (uint32, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ref, ok := s.pats[sha256.Sum256([]byte(token))]
	if !ok {
		return 0, tokenInvalid
	}
	u := s.users.get(ref.userID)
	if u == nil {
		return 0, tokenInvalid
	}
	p := u.pats[ref.name]
	if p == nil || (p.expiryAt != 0 && p.expiryAt <= uint64(s.clock().UnixMicro())) {
		return 0, tokenInvalid
	}
	if u.status != wire.UserActive {
		return 0, tokenUserInactive
	}
	return u.id, tokenOK
}

// createUser is CreateUser (33).
func (s *state) createUser(sess *session, name, password string, status uint8, perms *wire.Permissions) (userView, *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.grantsOf(sess).manageUsers(); err != nil {
		return userView{}, asRejection(err)
	}
	if !validUsername(name) {
		return userView{}, reject(codeInvalidUsername)
	}
	if _, ok := s.userIndex[name]; ok {
		return userView{}, reject(codeUserAlreadyExists)
	}
	if status != wire.UserInactive {
		status = wire.UserActive
	}
	u := &user{name: name, password: password, status: status, createdAt: s.nowLocked(), perms: clonePermissions(perms)}
	u.id = s.users.insert(u)
	s.userIndex[name] = u.id
	s.committed()
	return u.view(true), nil
}

// getUser is GetUser (31): found is false for an unknown user. Users may read themselves.
func (s *state) getUser(sess *session, id wire.Identifier) (v userView, found bool, err *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.resolveUser(id)
	if u == nil {
		return userView{}, false, nil
	}
	if u.id != sess.userID {
		if err := s.grantsOf(sess).readUsers(); err != nil {
			return userView{}, false, err
		}
	}
	return u.view(true), true, nil
}

// getUsers is GetUsers (32).
func (s *state) getUsers(sess *session) ([]userView, *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.grantsOf(sess).readUsers(); err != nil {
		return nil, err
	}
	var out []userView
	s.users.each(func(_ uint32, u *user) { out = append(out, u.view(false)) })
	return out, nil
}

// deleteUser is DeleteUser (34). The root user cannot be deleted.
func (s *state) deleteUser(sess *session, id wire.Identifier) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, err := s.managedUser(sess, id)
	if err != nil {
		return err
	}
	if u.id == rootUserID {
		return reject(codeCannotDeleteUser)
	}
	for _, p := range u.pats {
		delete(s.pats, p.hash)
	}
	delete(s.userIndex, u.name)
	s.users.remove(u.id)
	s.committed()
	return nil
}

// updateUser is UpdateUser (35): optional rename and status change.
func (s *state) updateUser(sess *session, id wire.Identifier, name *string, status *uint8) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, err := s.managedUser(sess, id)
	if err != nil {
		return err
	}
	if name != nil {
		if !validUsername(*name) {
			return reject(codeInvalidUsername)
		}
		if other, ok := s.userIndex[*name]; ok && other != u.id {
			return reject(codeUserAlreadyExists)
		}
		delete(s.userIndex, u.name)
		u.name = *name
		s.userIndex[u.name] = u.id
	}
	if status != nil && (*status == wire.UserActive || *status == wire.UserInactive) {
		u.status = *status
	}
	s.committed()
	return nil
}

// updatePermissions is UpdatePermissions (36). The root user's permissions are fixed.
func (s *state) updatePermissions(sess *session, id wire.Identifier, perms *wire.Permissions) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, err := s.managedUser(sess, id)
	if err != nil {
		return err
	}
	if u.id == rootUserID {
		return reject(codeCannotChangePermissions)
	}
	u.perms = clonePermissions(perms)
	s.committed()
	return nil
}

// changePassword is ChangePassword (37). Users may change their own password; changing
// someone else's needs manage_users. A wrong current password is a committed rejection.
func (s *state) changePassword(sess *session, id wire.Identifier, current, next string) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.resolveUser(id)
	if u == nil {
		return reject(codeResourceNotFound)
	}
	if u.id != sess.userID {
		if err := s.grantsOf(sess).manageUsers(); err != nil {
			return asRejection(err)
		}
	}
	if u.password != current || next == "" {
		return reject(codeInvalidCredentials)
	}
	u.password = next
	s.committed()
	return nil
}

// createPAT is CreatePersonalAccessToken (42): returns the raw token, shown only once.
// expiry is in µs from now; 0 and u64::MAX mean never.
func (s *state) createPAT(sess *session, name string, expiry uint64) (string, *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.users.get(sess.userID)
	if u == nil {
		return "", deny(codeResourceNotFound)
	}
	if len(u.pats) >= maxPATsPerUser {
		return "", deny(codePATLimitReached)
	}
	if _, ok := u.pats[name]; ok {
		return "", reject(codePATAlreadyExists)
	}
	var expiryAt uint64
	if expiry != 0 && expiry != wire.Never {
		now := s.nowLocked()
		expiryAt = now + expiry
		if expiryAt <= now {
			return "", reject(codeInvalidPATExpiry)
		}
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	token := strings.TrimRight(base64.RawURLEncoding.EncodeToString(raw[:]), "=")
	p := &pat{name: name, hash: sha256.Sum256([]byte(token)), expiryAt: expiryAt}
	if u.pats == nil {
		u.pats = map[string]*pat{}
	}
	u.pats[name] = p
	s.pats[p.hash] = patRef{userID: u.id, name: name}
	s.committed()
	return token, nil
}

// getPATs is GetPersonalAccessTokens (41): the caller's own tokens.
func (s *state) getPATs(sess *session) []wire.PersonalAccessToken {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.users.get(sess.userID)
	if u == nil {
		return nil
	}
	out := make([]wire.PersonalAccessToken, 0, len(u.pats))
	for _, p := range u.pats {
		out = append(out, wire.PersonalAccessToken{Name: p.name, ExpiryAt: p.expiryAt})
	}
	slices.SortFunc(out, func(a, b wire.PersonalAccessToken) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// deletePAT is DeletePersonalAccessToken (43).
func (s *state) deletePAT(sess *session, name string) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.users.get(sess.userID)
	if u == nil {
		return reject(codeResourceNotFound)
	}
	p, ok := u.pats[name]
	if !ok {
		return reject(codeResourceNotFound)
	}
	delete(u.pats, name)
	delete(s.pats, p.hash)
	s.committed()
	return nil
}
