package childproc

import (
	"strconv"
	"sync"
)

// Output keeps the last bytes a process printed, addressed by absolute byte position so that
// a caller can take only what was printed after a point (Mark, Since).
type Output struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped int64 // bytes discarded from the front
}

// NewOutput returns an Output that keeps the last limit bytes.
func NewOutput(limit int) *Output { return &Output{limit: limit} }

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(o.buf, p...)
	if over := len(o.buf) - o.limit; over > 0 {
		o.buf = append(o.buf[:0], o.buf[over:]...)
		o.dropped += int64(over)
	}
	return len(p), nil
}

// Mark returns the current end position.
func (o *Output) Mark() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dropped + int64(len(o.buf))
}

// Since returns what was written after position pos, as much of it as is still kept, after a
// line saying how much was dropped if any was.
func (o *Output) Since(pos int64) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	start := pos - o.dropped
	prefix := ""
	if start < 0 {
		prefix = "[... " + strconv.FormatInt(-start, 10) + " earlier bytes dropped ...]\n"
		start = 0
	}
	return prefix + string(o.buf[start:])
}

// String is everything kept: Since(0).
func (o *Output) String() string { return o.Since(0) }
