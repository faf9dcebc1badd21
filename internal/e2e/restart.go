package e2e

import (
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/childproc"
)

// startRestartableEnv starts a gateway with extraEnv for a scenario that restarts it or
// changes its Iggy backend, on a backend of its own: a fresh in-memory server, or the real
// server of IGGY_TEST_ADDR. With a fresh server nothing but this gateway writes the
// coordinator log it reloads. Both are stopped when t ends.
func startRestartableEnv(t *testing.T, extraEnv ...string) *Env {
	t.Helper()
	if sharedEnv(t).External() {
		t.Skip("needs a gateway started by the harness (IGGYGW_E2E_BOOTSTRAP is set)")
	}
	backend, err := startIggyBackend()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(backend.close)
	env, err := startGatewayEnv(backend, extraEnv...)
	if err != nil {
		t.Fatalf("start gateway: %v", err)
	}
	t.Cleanup(func() { env.stopGateway(t) })
	return env
}

// restart stops the gateway with SIGTERM (a graceful shutdown) and starts the same binary with
// the same settings on the same address against the same Iggy backend, waiting until it
// answers. Clients keep their bootstrap address.
func (e *Env) restart(t *testing.T) {
	t.Helper()
	start := time.Now()
	e.stopGateway(t)
	stopped := time.Since(start)
	e.startAgain(t)
	t.Logf("gateway restarted on %s (stopped in %s, serving again after %s)", e.Bootstrap,
		stopped.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// kill ends the gateway with SIGKILL, as a crash or the OOM killer would: no drain, no
// checkpoint of the coordinator log. startAgain brings it back. Its output is printed if t
// fails.
func (e *Env) kill(t *testing.T) {
	t.Helper()
	g := e.gateway
	if err := g.Kill(); err != nil {
		t.Fatalf("SIGKILL the gateway: %v", err)
	}
	if races := raceReports(g.Output); races != "" {
		t.Errorf("data race in the gateway:\n%s", races)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("output of the gateway killed with SIGKILL:\n%s", indent(g.Output.String()))
		}
	})
}

// startAgain starts the same binary with the same settings on the same address against the
// same Iggy backend after the gateway stopped, and waits until it answers. Clients keep their
// bootstrap address.
func (e *Env) startAgain(t *testing.T) {
	t.Helper()
	g, err := childproc.SpawnGateway(gatewayBuild.bin, e.gateway.Addr, gatewayConfig(e.iggy.target, nil))
	if err != nil {
		t.Fatal(err)
	}
	e.gateway = g
	if _, err := waitReady(g, 60*time.Second); err != nil {
		t.Fatalf("gateway after restart: %v\n%s", err, indent(g.Output.String()))
	}
}

// stopGateway stops the gateway gracefully, failing t if it exits badly or reported a data
// race; its output is printed when t has failed.
func (e *Env) stopGateway(t *testing.T) {
	t.Helper()
	g := e.gateway
	if dead, _ := g.Exited(); dead {
		return
	}
	if err := g.Stop(); err != nil {
		t.Errorf("gateway exited with %v", err)
	}
	if races := raceReports(g.Output); races != "" {
		t.Errorf("data race in the gateway:\n%s", races)
	}
	if t.Failed() {
		t.Logf("gateway output:\n%s", indent(g.Output.String()))
	}
}
