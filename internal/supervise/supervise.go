// Package supervise is the one rule for the gateway's long-lived goroutines (issue 25): each
// is started by an owner that can stop it and waits for it, and a panic in one ends that
// connection or task with an error (logged with its stack, counted by component for the
// panics_total metric), never the whole process.
package supervise

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
)

// PanicError is a recovered panic, as the error of the connection or task it ended.
type PanicError struct {
	Component string
	Value     any
	Stack     []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("%s panicked: %v", e.Component, e.Value)
}

var panics sync.Map // component → *atomic.Int64

// Recover, deferred, recovers a panic of the calling goroutine: it logs it with its stack,
// counts it for component and stores it in *err (when err is not nil). Components are fixed
// names from the code ("listener_writer", "offsets_writer"...), so the metric's label values
// are bounded.
func Recover(log *slog.Logger, component string, err *error) {
	p := recover()
	if p == nil {
		return
	}
	pe := &PanicError{Component: component, Value: p, Stack: debug.Stack()}
	count(component)
	if log == nil {
		log = slog.Default()
	}
	log.Error("recovered from a panic", "component", component, "panic", fmt.Sprint(p), "stack", string(pe.Stack))
	if err != nil {
		*err = pe
	}
}

// Go runs fn on a goroutine of wg (the owner waits for it with wg.Wait), recovering a panic
// of fn as Recover does and handing it to onPanic (nil: only logged and counted).
func Go(wg *sync.WaitGroup, log *slog.Logger, component string, fn func(), onPanic func(error)) {
	wg.Go(func() {
		var err error
		defer func() {
			if err != nil && onPanic != nil {
				onPanic(err)
			}
		}()
		defer Recover(log, component, &err)
		fn()
	})
}

func count(component string) {
	c, _ := panics.LoadOrStore(component, new(atomic.Int64))
	c.(*atomic.Int64).Add(1)
}

// Count is one component's recovered panics.
type Count struct {
	Component string
	Panics    int64
}

// Panics returns the panics recovered so far in this process, by component, sorted.
func Panics() []Count {
	var out []Count
	panics.Range(func(k, v any) bool {
		out = append(out, Count{Component: k.(string), Panics: v.(*atomic.Int64).Load()})
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Component < out[j].Component })
	return out
}
