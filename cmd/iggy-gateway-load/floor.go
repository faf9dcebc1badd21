package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"syscall"
	"time"
)

// The socket floor is what every byte a producer writes through the gateway costs the gateway
// in system calls alone, measured on this machine at this moment: a relay reads 1 MiB frames
// from one loopback TCP connection and writes each to another, with no work of its own, as the
// gateway reads a Produce frame from the client and writes the records to Iggy. The kernel
// copies each byte twice on the relay's account (out of the receive queue, into the send
// queue, and loopback delivers the sent bytes to the receiver in the sender's system call).
// No gateway can spend less per GB produced over loopback TCP, so its produce CPU is read
// best as a ratio to this floor, measured in the same round (docs/PERFORMANCE.md).

const (
	floorFrame = 1 << 20
	// floorRing is how many frames the relay cycles through: resident memory, written
	// before, like pooled frames, and more than the CPU caches hold, like the gateway's.
	floorRing = 32
	// minFloorBytes is the least a floor measurement relays: tens of milliseconds of CPU, so
	// that the thread's CPU time, which the kernel brings up to date only every few
	// milliseconds, is measured rather than rounded away.
	minFloorBytes = 64 << 20
)

// socketFloor is the relay's CPU for Bytes bytes: in its reads and in its writes.
type socketFloor struct {
	Bytes   int64
	Receive time.Duration
	Send    time.Duration
}

// perGB returns the relay's receive and send CPU seconds per 10⁹ bytes.
func (f socketFloor) perGB() (receive, send float64) {
	gb := float64(f.Bytes) / 1e9
	return f.Receive.Seconds() / gb, f.Send.Seconds() / gb
}

// measureSocketFloor relays at least n bytes: source → relay → sink over loopback TCP.
func measureSocketFloor(ctx context.Context, n int64) (socketFloor, error) {
	frames := max(int((n+floorFrame-1)/floorFrame), 1)
	var lc net.ListenConfig
	in, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return socketFloor{}, err
	}
	defer in.Close()
	out, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return socketFloor{}, err
	}
	defer out.Close()

	errc := make(chan error, 2)
	go func() {
		err := floorSource(ctx, in.Addr().String(), frames)
		if err != nil {
			in.Close() // the relay may still be waiting for the source to connect
		}
		errc <- err
	}()
	go func() { errc <- floorSink(out) }()

	src, err := in.Accept()
	if err != nil {
		return socketFloor{}, err
	}
	var d net.Dialer
	dst, err := d.DialContext(ctx, "tcp", out.Addr().String())
	if err != nil {
		src.Close()
		return socketFloor{}, err
	}
	f, relayErr := relay(src, dst, frames)
	// Closing both ends stops the source and the sink whether or not the relay finished.
	src.Close()
	dst.Close()
	return f, errors.Join(relayErr, <-errc, <-errc)
}

// relay moves frames frames from src to dst on a thread of its own, whose CPU it measures.
func relay(src, dst net.Conn, frames int) (socketFloor, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ring := make([][]byte, floorRing)
	for i := range ring {
		ring[i] = make([]byte, floorFrame)
		for j := range ring[i] {
			ring[i][j] = byte(j)
		}
	}
	var f socketFloor
	for i := range frames {
		buf := ring[i%floorRing]
		t0 := threadCPU()
		if _, err := io.ReadFull(src, buf); err != nil {
			return f, fmt.Errorf("socket floor relay read: %w", err)
		}
		t1 := threadCPU()
		if _, err := dst.Write(buf); err != nil {
			return f, fmt.Errorf("socket floor relay write: %w", err)
		}
		f.Receive += t1 - t0
		f.Send += threadCPU() - t1
		f.Bytes += floorFrame
	}
	return f, nil
}

func floorSource(ctx context.Context, addr string, frames int) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, floorFrame)
	for range frames {
		if _, err := c.Write(buf); err != nil {
			return fmt.Errorf("socket floor source: %w", err)
		}
	}
	return nil
}

func floorSink(ln net.Listener) error {
	c, err := ln.Accept()
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := io.Copy(io.Discard, c); err != nil {
		return fmt.Errorf("socket floor sink: %w", err)
	}
	return nil
}

// threadCPU is the user and system CPU of the calling thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
