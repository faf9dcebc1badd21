package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Cmd describes one run of an external client program.
type Cmd struct {
	Name    string
	Args    []string
	Stdin   string
	Env     []string // added to the test process's environment
	Dir     string
	Timeout time.Duration // default 60 s
}

// CmdResult is what the program printed and how it ended.
type CmdResult struct {
	Stdout, Stderr string
	ExitCode       int // -1 when killed by the timeout or a signal
	Elapsed        time.Duration
	Err            error // start failure or timeout; nil for a plain non-zero exit
}

// String renders the command line as a user would type it, for logs.
func (c Cmd) String() string {
	var b strings.Builder
	b.WriteString(c.Name)
	for _, a := range c.Args {
		b.WriteByte(' ')
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$|&;<>*?") {
			b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
		} else {
			b.WriteString(a)
		}
	}
	return b.String()
}

// runCmd runs c to completion and returns its output. The program and all its children are
// killed when the timeout expires, so a hung client cannot hang the suite.
func runCmd(t testing.TB, c Cmd) CmdResult {
	t.Helper()
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Name, c.Args...)
	cmd.Dir = c.Dir
	if len(c.Env) > 0 {
		cmd.Env = append(cmd.Environ(), c.Env...)
	}
	cmd.Stdin = strings.NewReader(c.Stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second

	start := time.Now()
	err := cmd.Run()
	res := CmdResult{Stdout: stdout.String(), Stderr: stderr.String(), Elapsed: time.Since(start)}
	res.ExitCode = cmd.ProcessState.ExitCode()
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		res.Err = fmt.Errorf("timed out after %s", timeout)
	case err != nil && !errors.As(err, &exitErr):
		res.Err = err
	}
	t.Logf("$ %s  # exit %d in %s", c, res.ExitCode, res.Elapsed.Round(time.Millisecond))
	return res
}

// mustRun runs c and fails the test unless it exits 0; the output is printed on failure.
func mustRun(t testing.TB, c Cmd) CmdResult {
	t.Helper()
	res := runCmd(t, c)
	if res.Err != nil || res.ExitCode != 0 {
		t.Fatalf("%s failed (exit %d, %v)\nstdout:\n%s\nstderr:\n%s", c, res.ExitCode, res.Err,
			indent(res.Stdout), indent(res.Stderr))
	}
	return res
}

func indent(s string) string {
	if s == "" {
		return "    (empty)"
	}
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
