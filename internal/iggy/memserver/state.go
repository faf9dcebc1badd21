package memserver

import (
	"sync"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// Limits the real server enforces (core/binary_protocol/src/lib.rs, iggy_common defaults).
const (
	maxPartitionsPerRequest = 1000
	maxPartitionsPerTopic   = 1000
	minUsernameLength       = 3
	maxUsernameLength       = 50
	minPasswordLength       = 3
	maxPasswordLength       = 100
	maxPATsPerUser          = 100
	defaultSegmentSize      = 1 << 30
	rootUserID              = 0
)

// state is everything the server knows. Every method takes mu; stored message batches are
// immutable once appended, so a poll can hand their bytes to the socket after unlocking.
type state struct {
	mu sync.Mutex

	clock    func() time.Time
	lastTime uint64 // µs; timestamps handed out never go backwards

	streams     slab[stream]
	streamIndex map[string]uint32

	users     slab[user]
	userIndex map[string]uint32
	pats      map[[32]byte]patRef // token hash → owner

	sessions     map[uint64]*session
	lastClientID uint32
	commit       uint64 // count of applied metadata operations
}

func newState(clock func() time.Time, rootUser, rootPassword string) *state {
	s := &state{
		clock:       clock,
		streamIndex: map[string]uint32{},
		userIndex:   map[string]uint32{},
		pats:        map[[32]byte]patRef{},
		sessions:    map[uint64]*session{},
	}
	root := &user{
		name:      rootUser,
		password:  rootPassword,
		status:    wire.UserActive,
		createdAt: s.nowLocked(),
		perms:     rootPermissions(),
	}
	s.userIndex[rootUser] = s.users.insert(root)
	return s
}

// nowLocked returns the current time in µs since the epoch, never less than the last value
// returned (the real server stamps batches from a monotonic clock).
func (s *state) nowLocked() uint64 {
	t := uint64(s.clock().UnixMicro())
	if t <= s.lastTime {
		t = s.lastTime + 1
	}
	s.lastTime = t
	return t
}

// committed records one applied metadata operation and returns its commit position.
func (s *state) committed() uint64 {
	s.commit++
	return s.commit
}

// commitPosition returns the current commit position, echoed in reply headers.
func (s *state) commitPosition() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commit
}

// grantsOf returns the acting user's permissions. A session whose user was deleted has none.
func (s *state) grantsOf(sess *session) grants {
	if sess.userID == rootUserID {
		return grants{root: true}
	}
	u := s.users.get(sess.userID)
	if u == nil {
		return grants{}
	}
	return grants{perms: u.perms}
}

func rootPermissions() *wire.Permissions {
	return &wire.Permissions{Global: wire.GlobalPermissions{
		ManageServers: true, ReadServers: true, ManageUsers: true, ReadUsers: true,
		ManageStreams: true, ReadStreams: true, ManageTopics: true, ReadTopics: true,
		PollMessages: true, SendMessages: true,
	}}
}
