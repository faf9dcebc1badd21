package listener

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/versions"
)

// tableDispatcher accepts exactly the versions of internal/versions, like the broker, and
// answers undecodable requests with an empty response at even versions and none (close) at
// odd ones, so that every path is exercised.
type tableDispatcher struct{}

func (tableDispatcher) Lookup(_ *ConnContext, key, version int16) (Handler, bool) {
	if !versions.Accepts(key, version, true) {
		return Handler{}, false
	}
	return Handler{
		Serve: func(context.Context, *ConnContext, kmsg.Request) (kmsg.Response, error) { return nil, nil },
		InvalidRequest: func(req kmsg.Request) kmsg.Response {
			if req.GetVersion()%2 == 1 {
				return nil
			}
			return req.ResponseKind()
		},
	}, true
}

// allocBound is the most a frame of n bytes may make the request path allocate. kmsg checks
// every declared array, string and bytes length against the bytes that remain before it
// allocates, so allocation grows linearly with the frame: an array element costs at least one
// input byte and at most a few dozen bytes of Go struct (the largest request element structs
// of the listed APIs are under 64 bytes), decoded twice (the trailing-bytes check).
func allocBound(n int) uint64 { return uint64(2*64*n) + 64<<10 }

// FuzzParseFrame drives arbitrary frames through header parsing and body decoding for every
// listed API: no panic, and allocation bounded by the frame size.
func FuzzParseFrame(f *testing.F) {
	for _, a := range versions.All() {
		for v := a.Min; v <= a.Max; v++ {
			req := kmsg.RequestForKey(a.Key)
			req.SetVersion(v)
			frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("fuzz")).AppendRequest(nil, req, 1)
			f.Add(frame[4:])
		}
	}
	cc := &ConnContext{}
	var ms runtime.MemStats
	f.Fuzz(func(t *testing.T, frame []byte) {
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		r, err := parseFrame(cc, tableDispatcher{}, frame)
		runtime.ReadMemStats(&ms)
		if got := ms.TotalAlloc - before; got > allocBound(len(frame)) {
			t.Fatalf("a %d-byte frame allocated %d bytes", len(frame), got)
		}
		var rej *rejection
		if err != nil && !errors.As(err, &rej) {
			t.Fatalf("non-rejection error %v", err)
		}
		if err == nil && r.req == nil {
			t.Fatal("accepted frame without a request")
		}
		if err == nil && r.invalid == nil {
			// A decoded request must encode again: the handlers will read every field.
			r.req.AppendTo(nil)
		}
	})
}
