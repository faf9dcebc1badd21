//go:build unix

package iggy

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
)

// peerClosed reports whether the server has already closed nc (an orderly shutdown or a
// reset waiting to be read), without blocking and without consuming any byte: a
// MSG_PEEK|MSG_DONTWAIT receive of one byte. It lets a request that must not be replayed
// (SendMessages) go out on a fresh connection instead of being written into a dead one and
// reported as "may have landed" when it cannot have.
func peerClosed(nc net.Conn) bool {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case rerr == nil:
			closed = n == 0 // end of stream; n == 1 is a reply or eviction frame to read
		case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EWOULDBLOCK), errors.Is(rerr, syscall.EINTR):
		default:
			closed = true // ECONNRESET and the like
		}
		return true // never wait for readiness
	})
	return closed || err != nil
}
