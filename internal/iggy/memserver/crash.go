package memserver

// Crash simulates a crash of kind k and a restart on the same address: every connection is
// dropped (their sessions end, releasing group memberships), connections arriving meanwhile
// are refused, and then each partition keeps only what the real server would find on disk
// (see durability.go); metadata (streams, topics, users, tokens, groups) is kept, on the
// assumption that the server had made it durable before answering. It returns how many
// messages were lost.
func (s *Server) Crash(k CrashKind) uint64 {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0
	}
	s.crashing = true
	s.mu.Unlock()

	for _, c := range s.openConns() {
		c.nc.Close()
	}
	s.connsGone()

	s.state.mu.Lock()
	lost := s.state.crashLocked(k)
	s.state.committed()
	s.state.mu.Unlock()

	s.mu.Lock()
	s.crashing = false
	s.mu.Unlock()
	s.log.Warn("simulated crash: unsaved messages dropped", "kind", k.String(), "lost_messages", lost)
	return lost
}

// connsGone waits until every connection goroutine has finished, so that no request is being
// applied while the crash truncates the logs.
func (s *Server) connsGone() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.conns) > 0 {
		s.connsCond.Wait()
	}
}
