package childproc

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// ErrNotStopped is returned by Stop for a child that had to be killed.
var ErrNotStopped = errors.New("did not stop")

// Child is a program running as a child process.
type Child struct {
	Cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // exit status, valid once done is closed
}

// Start starts cmd in a process group of its own and waits for it in the background.
func Start(cmd *exec.Cmd) (*Child, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Child{Cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// PID is the child's process id, which is also its process group id.
func (c *Child) PID() int { return c.Cmd.Process.Pid }

// Done is closed once the child has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// Exited reports whether the child has exited, and its exit status.
func (c *Child) Exited() (bool, error) {
	select {
	case <-c.done:
		return true, c.err
	default:
		return false, nil
	}
}

// Kill ends the child's process group with SIGKILL, as a crash would, and waits for the child
// to exit.
func (c *Child) Kill() error {
	if dead, _ := c.Exited(); dead {
		return nil
	}
	if err := syscall.Kill(-c.PID(), syscall.SIGKILL); err != nil {
		if dead, _ := c.Exited(); dead {
			return nil
		}
		return err
	}
	<-c.done
	return nil
}

// Stop asks the child's process group to stop with SIGTERM, as a user or an orchestrator
// would, and waits up to grace for the child to exit; then it kills it, and the error is
// ErrNotStopped. Otherwise the error is the child's exit status.
func (c *Child) Stop(grace time.Duration) error {
	if dead, err := c.Exited(); dead {
		return err
	}
	_ = syscall.Kill(-c.PID(), syscall.SIGTERM)
	select {
	case <-c.done:
		return c.err
	case <-time.After(grace):
	}
	if err := c.Kill(); err != nil {
		return fmt.Errorf("%w within %s of SIGTERM, and SIGKILL failed: %v", ErrNotStopped, grace, err)
	}
	return fmt.Errorf("%w within %s of SIGTERM: killed (%v)", ErrNotStopped, grace, c.err)
}
