package supervise

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func panicsOf(component string) int64 {
	for _, c := range Panics() {
		if c.Component == component {
			return c.Panics
		}
	}
	return 0
}

// A panic in a supervised goroutine becomes that goroutine's error, logged with its stack and
// counted; the process and the other goroutines go on, and the owner's Wait returns.
func TestGoRecoversIntoAnError(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	Go(&wg, log, "test_task", func() { panic("boom") }, func(err error) { errs <- err })
	Go(&wg, log, "test_task", func() {}, func(err error) { errs <- err })
	wg.Wait()
	close(errs)
	var got []error
	for err := range errs {
		got = append(got, err)
	}
	if len(got) != 1 {
		t.Fatalf("errors %v, want one from the panicking goroutine", got)
	}
	var pe *PanicError
	if !errors.As(got[0], &pe) || pe.Value != "boom" || pe.Component != "test_task" {
		t.Fatalf("error %v", got[0])
	}
	if !strings.Contains(logs.String(), "recovered from a panic") || !strings.Contains(logs.String(), "supervise_test.go") {
		t.Errorf("panic not logged with its stack:\n%s", logs.String())
	}
	if n := panicsOf("test_task"); n != 1 {
		t.Errorf("panics counted %d, want 1", n)
	}
}

func TestRecoverWithoutPanic(t *testing.T) {
	err := func() (err error) {
		defer Recover(nil, "quiet", &err)
		return nil
	}()
	if err != nil || panicsOf("quiet") != 0 {
		t.Fatalf("err %v, panics %d", err, panicsOf("quiet"))
	}
}
