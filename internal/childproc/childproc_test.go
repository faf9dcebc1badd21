package childproc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestOutputKeepsTailAndPositions(t *testing.T) {
	o := NewOutput(8)
	o.Write([]byte("abcd"))
	mark := o.Mark()
	o.Write([]byte("efgh"))
	if got := o.Since(mark); got != "efgh" {
		t.Errorf("Since(mark) = %q, want efgh", got)
	}
	if got := o.String(); got != "abcdefgh" {
		t.Errorf("String() = %q before any drop, want abcdefgh", got)
	}
	o.Write([]byte("ijkl")) // drops abcd
	if got := o.Since(mark); got != "efghijkl" {
		t.Errorf("Since(mark) after overflow = %q, want efghijkl", got)
	}
	if got := o.String(); got != "[... 4 earlier bytes dropped ...]\nefghijkl" {
		t.Errorf("String() = %q, want a drop notice then efghijkl", got)
	}
}

func TestChildStopAndKill(t *testing.T) {
	for _, tt := range []struct {
		name    string
		script  string
		stop    func(*Child) error
		wantErr func(error) bool
	}{
		{"exits on SIGTERM", "echo ready; exec sleep 30", func(c *Child) error { return c.Stop(10 * time.Second) },
			func(err error) bool { return err != nil && !errors.Is(err, ErrNotStopped) }},
		{"ignores SIGTERM", "trap '' TERM; echo ready; sleep 30", func(c *Child) error { return c.Stop(200 * time.Millisecond) },
			func(err error) bool { return errors.Is(err, ErrNotStopped) }},
		{"already exited", "echo ready", func(c *Child) error { <-c.Done(); return c.Stop(time.Second) },
			func(err error) bool { return err == nil }},
		{"killed", "trap '' TERM; echo ready; sleep 30", func(c *Child) error { return c.Kill() },
			func(err error) bool { return err == nil }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", tt.script)
			out := NewOutput(1 << 10)
			cmd.Stdout = out
			c, err := Start(cmd)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Kill() })
			waitOutput(t, out, "ready")
			if err := tt.stop(c); !tt.wantErr(err) {
				t.Errorf("error %v", err)
			}
			if dead, _ := c.Exited(); !dead {
				t.Error("still running")
			}
		})
	}
}

// waitOutput waits until out has printed want.
func waitOutput(t *testing.T, out *Output, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), want); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("output %q lacks %q", out, want)
		}
	}
}

// fakeGateway writes a program that prints its environment, then exits or waits to be
// stopped.
func fakeGateway(t *testing.T, wait bool) string {
	t.Helper()
	script := "#!/bin/sh\nenv\n"
	if wait {
		script += "exec sleep 30\n"
	}
	bin := filepath.Join(t.TempDir(), "gateway")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestSpawnGatewayEnvironment(t *testing.T) {
	t.Setenv("IGGY_KAFKA_LEFT_IN_THE_SHELL", "1")
	t.Setenv("CHILDPROC_TEST_KEPT", "1")
	cfg := GatewayConfig{
		Iggy:     Iggy{Addr: "127.0.0.1:8090", Username: "u", Password: "p", Stream: "s"},
		LogLevel: "warn",
		AddrEnv:  []string{"PROFILE_ADDR"},
		Env:      []string{"IGGY_KAFKA_LOG_LEVEL=debug"},
	}
	cfg.OutputLimit = 1 << 20
	g, err := SpawnGateway(fakeGateway(t, false), "127.0.0.1:9092", cfg)
	if err != nil {
		t.Fatal(err)
	}
	<-g.Done()
	env := strings.Split(strings.TrimSpace(g.Output.String()), "\n")
	for _, want := range []string{"IGGY_KAFKA_BIND_ADDR=127.0.0.1:9092", "IGGY_KAFKA_BRIDGE_ENABLED=true",
		"IGGY_KAFKA_IGGY_ADDR=127.0.0.1:8090", "IGGY_KAFKA_IGGY_USERNAME=u", "IGGY_KAFKA_IGGY_PASSWORD=p",
		"IGGY_KAFKA_IGGY_STREAM=s", "IGGY_KAFKA_LOG_LEVEL=debug", "PROFILE_ADDR=" + g.Addrs["PROFILE_ADDR"], "CHILDPROC_TEST_KEPT=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("environment lacks %s:\n%s", want, g.Output)
		}
	}
	if !strings.HasPrefix(g.Addrs["PROFILE_ADDR"], "127.0.0.1:") {
		t.Errorf("addresses %v", g.Addrs)
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "IGGY_KAFKA_LEFT_IN_THE_SHELL=") || kv == "IGGY_KAFKA_LOG_LEVEL=warn" {
			t.Errorf("environment has %s", kv)
		}
	}
}

func TestStartGatewayTriesAgain(t *testing.T) {
	bin := fakeGateway(t, true)
	var tries []string
	_, err := StartGateway(context.Background(), bin, GatewayConfig{OutputLimit: 1 << 20}, func(_ context.Context, g *Gateway) error {
		tries = append(tries, g.Addr)
		waitOutput(t, g.Output, "IGGY_KAFKA_BIND_ADDR=")
		return errors.New("not ready")
	})
	if err == nil || !strings.Contains(err.Error(), "not ready\ngateway output:\n") || !strings.Contains(err.Error(), "IGGY_KAFKA_BIND_ADDR="+tries[2]) {
		t.Errorf("error %v", err)
	}
	if len(tries) != 3 || tries[0] == tries[1] && tries[1] == tries[2] {
		t.Errorf("tried %v, want 3 starts on fresh ports", tries)
	}

	g, err := StartGateway(context.Background(), bin, GatewayConfig{OutputLimit: 1 << 20}, func(context.Context, *Gateway) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if dead, _ := g.Exited(); dead {
		t.Fatal("ready gateway exited")
	}
	if err := g.Stop(); err == nil || errors.Is(err, ErrNotStopped) {
		t.Errorf("Stop: %v, want the exit status of a process ended by SIGTERM", err)
	}
}

// TestRepoRootSkipsNestedModules: from inside the nested end-to-end module, RepoRoot finds the
// gateway's go.mod, not the nearer one.
func TestRepoRootSkipsNestedModules(t *testing.T) {
	root := t.TempDir()
	nested := filepath.Join(root, "internal", "e2e")
	deep := filepath.Join(nested, "cmd", "tool")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for dir, mod := range map[string]string{root: Module, nested: Module + "/internal/e2e"} {
		gomod := "// comment\nmodule " + mod + "\n\ngo 1.26\n"
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, wd := range []string{root, nested, deep} {
		t.Run(strings.TrimPrefix(wd, root), func(t *testing.T) {
			t.Chdir(wd)
			got, err := RepoRoot()
			if err != nil || got != root {
				t.Fatalf("RepoRoot from %s = %q, %v; want %q", wd, got, err, root)
			}
		})
	}
	t.Run("no gateway module", func(t *testing.T) {
		t.Chdir(nested)
		if err := os.Remove(filepath.Join(root, "go.mod")); err != nil {
			t.Fatal(err)
		}
		if got, err := RepoRoot(); err == nil {
			t.Fatalf("RepoRoot = %q without the gateway's go.mod", got)
		}
	})
}
