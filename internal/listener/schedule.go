package listener

// schedule decides what each request of a connection waits for before its handler starts, so
// that requests take effect in request order (see the package documentation). It is used by
// the connection's reader only.
type schedule struct {
	limit int // requests in flight at most: lists longer than this hold finished requests
	// lastOrdered is done when the latest ordered request and everything before it are done.
	lastOrdered chan struct{}
	// concurrent and pipelined hold the done channels of the concurrent and pipelined requests
	// read since then; lastStarted is the started channel of the latest pipelined request.
	concurrent  []chan struct{}
	pipelined   []chan struct{}
	lastStarted chan struct{}
}

func newSchedule(limit int) *schedule {
	return &schedule{limit: limit, lastOrdered: closedChan, lastStarted: closedChan}
}

var closedChan = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// add records a request of handler h, whose done channel closes when it has finished and whose
// started channel (pipelined handlers only) closes when its ordered part is done, and returns
// the channels that must be closed before it starts:
//   - an ordered request waits for everything before it;
//   - a concurrent request waits for the latest ordered one and every pipelined one since,
//     so it sees their effects, but not for other concurrent ones;
//   - a pipelined request waits for the latest ordered one, the concurrent ones since (it
//     must not change what they see) and the start of the previous pipelined one, but not
//     for that one to finish.
func (s *schedule) add(h Handler, done, started chan struct{}) []chan struct{} {
	switch {
	case h.Pipelined:
		gates := append([]chan struct{}{s.lastOrdered, s.lastStarted}, s.concurrent...)
		s.concurrent = nil // done before this request starts, which later requests wait for
		s.pipelined = s.track(s.pipelined, done)
		s.lastStarted = started
		return gates
	case h.Concurrent:
		gates := append([]chan struct{}{s.lastOrdered}, s.pipelined...)
		s.concurrent = s.track(s.concurrent, done)
		return gates
	default:
		gates := append(append([]chan struct{}{s.lastOrdered}, s.concurrent...), s.pipelined...)
		s.lastOrdered, s.lastStarted = done, closedChan
		s.concurrent, s.pipelined = nil, nil
		return gates
	}
}

// track appends done to list, first dropping the channels of finished requests when the list
// is as long as the requests that can be in flight.
func (s *schedule) track(list []chan struct{}, done chan struct{}) []chan struct{} {
	if len(list) >= s.limit {
		list = pending(list)
	}
	return append(list, done)
}

// pending keeps the channels that are not closed yet, in place.
func pending(chans []chan struct{}) []chan struct{} {
	out := chans[:0]
	for _, ch := range chans {
		select {
		case <-ch:
		default:
			out = append(out, ch)
		}
	}
	clear(chans[len(out):])
	return out
}
