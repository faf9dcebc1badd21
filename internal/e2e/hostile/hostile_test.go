package hostile

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/childproc"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

// The gateway under attack runs with these limits (docs/LIMITS.md): small, so that the
// attacks fill them quickly on 2 cores. Frames may be as large as largeFrame, below one
// address's share as a sized deployment would have it; most attacks use maxFrame.
const (
	budget      = 64 << 20
	addrShare   = 48 << 20
	tailCache   = 16 << 20
	largeFrame  = 32 << 20
	maxFrame    = 1 << 20
	maxConns    = 64
	readTimeout = 5 * time.Second
)

// Attackers and the health client connect from different loopback addresses, as different
// peers would.
const (
	attacker  = "127.0.0.1"
	attacker2 = "127.0.0.3"
	healthIP  = "127.0.0.2"
)

// healthBound is how long a health request may take while the gateway is under attack.
const healthBound = 10 * time.Second

// scale multiplies the attack sizes: E2E_HOSTILE_SCALE (docs/LIMITS.md), 1 by default.
func scale(t *testing.T) int {
	s := os.Getenv("E2E_HOSTILE_SCALE")
	if s == "" {
		return 1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("E2E_HOSTILE_SCALE=%q: want a positive integer", s)
	}
	return n
}

type target struct {
	gw       *childproc.Gateway
	baseline int64 // peak RSS after start-up and a warm-up round trip
}

// ceiling is the peak RSS the gateway may reach (issue 25's goal, docs/LIMITS.md): the request
// memory, the tail cache and 256 MiB for everything else, whatever the traffic. The Go
// runtime's soft memory limit (request memory + tail cache + 192 MiB) keeps the collector's
// headroom inside it.
func (g *target) ceiling() int64 { return budget + tailCache + 256<<20 }

func startTarget(t *testing.T) *target {
	t.Helper()
	if _, err := dialFrom(healthIP, "127.0.0.1:1"); err != nil && isAddrUnavailable(err) {
		t.Skipf("cannot connect from %s: %v", healthIP, err)
	}
	root, err := childproc.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, err := childproc.BuildGateway(ctx, root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	iggy := childproc.Iggy{Addr: os.Getenv("IGGY_TEST_ADDR"), Username: os.Getenv("IGGY_TEST_USERNAME"),
		Password: os.Getenv("IGGY_TEST_PASSWORD"), Stream: "hostile"}
	if iggy.Addr == "" {
		ms, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0", RootUsername: "iggy", RootPassword: "iggy"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ms.Close() })
		iggy.Addr, iggy.Username, iggy.Password = ms.Addr(), "iggy", "iggy"
	}
	cfg := childproc.GatewayConfig{Iggy: iggy, LogLevel: "info", OutputLimit: 256 << 10, Env: []string{
		"IGGY_KAFKA_MAX_REQUEST_MEMORY=" + strconv.Itoa(budget),
		"IGGY_KAFKA_MAX_REQUEST_MEMORY_PER_ADDRESS=" + strconv.Itoa(addrShare),
		"IGGY_KAFKA_MAX_FRAME_SIZE=" + strconv.Itoa(largeFrame),
		"IGGY_KAFKA_TAIL_CACHE_BYTES=" + strconv.Itoa(tailCache),
		"IGGY_KAFKA_MAX_CONNECTIONS=" + strconv.Itoa(maxConns),
		"IGGY_KAFKA_READ_TIMEOUT=" + readTimeout.String(),
		"IGGY_KAFKA_AUTO_CREATE_TOPICS_ENABLED=false",
	}}
	gw, err := childproc.StartGateway(ctx, bin, cfg, func(ctx context.Context, g *childproc.Gateway) error {
		for ctx.Err() == nil {
			if _, err := apiVersions(healthIP, g.Addr, 2*time.Second); err == nil {
				return nil
			}
			if dead, err := g.Exited(); dead {
				return fmt.Errorf("gateway exited: %v", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		return ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Kill() })
	g := &target{gw: gw}
	cl := g.client(t)
	if _, err := kadm.NewClient(cl).ListTopics(ctx); err != nil {
		t.Fatal(err)
	}
	if g.baseline, err = childproc.PeakRSS(gw.PID()); err != nil {
		t.Fatal(err)
	}
	t.Logf("baseline peak RSS %d MiB, ceiling %d MiB", g.baseline>>20, g.ceiling()>>20)
	if !strings.Contains(gw.Output.String(), "Go runtime memory limit set") {
		t.Errorf("no soft memory limit logged at startup:\n%s", gw.Output.String())
	}
	return g
}

func (g *target) client(t *testing.T) *kgo.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(g.gw.Addr), kgo.ProducerBatchMaxBytes(maxFrame/2),
		kgo.BrokerMaxWriteBytes(maxFrame), kgo.FetchMaxBytes(maxFrame/2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// underAttack runs attack while a health client asks for ApiVersions on a new connection
// every 200 ms, then checks the health answers, that the gateway lives, and its peak RSS.
func (g *target) underAttack(t *testing.T, attack func()) {
	t.Helper()
	stop := make(chan struct{})
	type probe struct {
		worst time.Duration
		fails []error
		count int
	}
	done := make(chan probe)
	go func() {
		var p probe
		for {
			d, err := apiVersions(healthIP, g.gw.Addr, healthBound)
			p.count++
			p.worst = max(p.worst, d)
			if err != nil {
				p.fails = append(p.fails, err)
			}
			select {
			case <-stop:
				done <- p
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	attack()
	close(stop)
	p := <-done
	if dead, err := g.gw.Exited(); dead {
		t.Fatalf("gateway died: %v\n%s", err, g.gw.Output)
	}
	if len(p.fails) > 0 {
		t.Errorf("%d of %d health requests failed, first: %v", len(p.fails), p.count, p.fails[0])
	}
	peak, err := childproc.PeakRSS(g.gw.PID())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("peak RSS %d MiB (ceiling %d MiB); %d health requests, slowest %v", peak>>20, g.ceiling()>>20, p.count, p.worst.Round(time.Millisecond))
	if peak > g.ceiling() {
		t.Errorf("peak RSS %d MiB over the ceiling of %d MiB", peak>>20, g.ceiling()>>20)
	}
}

// parallel runs n copies of fn at once and waits for them.
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { fn(i) })
	}
	wg.Wait()
}

// hostileBody fills the first array of req with as many zero-valued entries as fit in about
// size bytes: the shape that decodes into the most memory per wire byte.
func hostileBody(req kmsg.Request, size int) []byte {
	v := reflect.ValueOf(req).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() != reflect.Slice || f.Type().Elem().Kind() == reflect.Uint8 {
			continue
		}
		empty := len(req.AppendTo(nil))
		f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		per := len(req.AppendTo(nil)) - empty
		n := (size - empty - 8) / per
		f.Set(reflect.MakeSlice(f.Type(), n, n))
		return req.AppendTo(nil)
	}
	panic("no array to fill")
}

// exchange sends body as a request of key and version on a new attacker connection and
// returns the answer's body, or nil for a closed connection: one of the gateway's answers to
// abuse. What is checked is the gateway's health, not these answers.
func (g *target) exchange(t *testing.T, key, version int16, body []byte, timeout time.Duration) []byte {
	return g.exchangeFrom(t, attacker, key, version, body, timeout)
}

// exchangeFrom is exchange from the loopback address local.
func (g *target) exchangeFrom(t *testing.T, local string, key, version int16, body []byte, timeout time.Duration) []byte {
	c, err := dialFrom(local, g.gw.Addr)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer c.Close()
	if err := c.sendBody(key, version, body); err != nil {
		return nil // closed while sending: refused
	}
	resp, _ := c.read(timeout)
	return resp
}
