package broker

import (
	"encoding/binary"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/versions"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// Every listed key at min-1, min, max and max+1, over a real socket: inside the range the
// gateway answers at the request's version; outside it closes the connection, except
// ApiVersions, which answers v0 with UNSUPPORTED_VERSION and the list (KIP-511).
func TestFirewallBoundaries(t *testing.T) {
	g := startGateway(t, gatewayOpts{})
	for _, a := range versions.All() {
		for _, v := range []int16{a.Min - 1, a.Min, a.Max, a.Max + 1} {
			accepted := a.Accepts(v) && !a.SASLOnly // a PLAINTEXT listener closes on SASL keys
			name := kmsg.NameForKey(a.Key)
			c := dialRaw(t, g.addr)
			req := kmsg.RequestForKey(a.Key)
			req.SetVersion(v)
			if av, ok := req.(*kmsg.ApiVersionsRequest); ok {
				av.ClientSoftwareName, av.ClientSoftwareVersion = "test", "1.0"
			}
			if pr, ok := req.(*kmsg.ProduceRequest); ok {
				pr.Acks = -1 // acks=0 is answered with nothing
			}
			switch {
			case accepted:
				resp := c.roundTrip(req)
				if resp.GetVersion() != v {
					t.Errorf("%s v%d: response version %d", name, v, resp.GetVersion())
				}
			case a.Key == kmsg.ApiVersions.Int16():
				c.send(req, 7)
				f := c.frame()
				if f == nil {
					t.Fatalf("ApiVersions v%d: connection closed, want a v0 error response", v)
				}
				resp := kmsg.NewPtrApiVersionsResponse()
				resp.Version = 0
				if err := resp.ReadFrom(f[4:]); err != nil {
					t.Fatalf("ApiVersions v%d: %v", v, err)
				}
				if resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != len(versions.Advertised(false)) {
					t.Errorf("ApiVersions v%d: error %d, %d keys", v, resp.ErrorCode, len(resp.ApiKeys))
				}
			default:
				c.send(req, 7)
				if f := c.frame(); f != nil {
					t.Errorf("%s v%d: got a %d-byte response, want the connection closed", name, v, len(f))
				}
			}
		}
	}
}

// Keys that are not listed close the connection, whatever the version.
func TestUnlistedKeysClose(t *testing.T) {
	g := startGateway(t, gatewayOpts{})
	for _, key := range []int16{0, 1, 2, 8, 11, 24, 25, 26, 28, 30, 31, 67, 1000, -1} {
		if _, ok := versions.Lookup(key); ok {
			continue
		}
		c := dialRaw(t, g.addr)
		var b []byte
		b = binary.BigEndian.AppendUint16(b, uint16(key))
		b = binary.BigEndian.AppendUint16(b, 0)
		b = binary.BigEndian.AppendUint32(b, 1)
		b = append(b, 0xff, 0xff) // null client id
		c.nc.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...))
		if f := c.frame(); f != nil {
			t.Errorf("key %d: got a response, want close", key)
		}
	}
}

// The ApiVersions answers are pinned byte for byte: a finalized feature, a tagged field in the
// header or an unexpected key would change them. When an API is added to the table, regenerate
// with `go test ./internal/broker -run TestApiVersionsGolden -update` and review the diff.
func TestApiVersionsGolden(t *testing.T) {
	g := startGateway(t, gatewayOpts{})
	tests := []struct {
		file    string
		version int16
	}{
		{"apiversions_v0.golden", 0},
		{"apiversions_v3.golden", 3},
		{"apiversions_unsupported_v127.golden", 127},
	}
	for _, tt := range tests {
		c := dialRaw(t, g.addr)
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = tt.version
		req.ClientSoftwareName, req.ClientSoftwareVersion = "golden", "1.0.0"
		c.send(req, 0x01020304)
		f := c.frame()
		if f == nil {
			t.Fatalf("v%d: connection closed", tt.version)
		}
		got := hex.Dump(f)
		path := filepath.Join("testdata", tt.file)
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs:\ngot:\n%s\nwant:\n%s", tt.file, got, want)
		}
	}
}

// The golden bytes decode to what they should mean; this keeps the pinned files honest.
func TestApiVersionsGoldenMeaning(t *testing.T) {
	for _, tt := range []struct {
		file          string
		decodeVersion int16
		wantErr       int16
	}{
		{"apiversions_v0.golden", 0, 0},
		{"apiversions_v3.golden", 3, 0},
		{"apiversions_unsupported_v127.golden", 0, kerr.UnsupportedVersion.Code},
	} {
		dump, err := os.ReadFile(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		f := undump(t, string(dump))
		if corr := binary.BigEndian.Uint32(f); corr != 0x01020304 {
			t.Errorf("%s: correlation id %#x", tt.file, corr)
		}
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = tt.decodeVersion
		if err := resp.ReadFrom(f[4:]); err != nil { // header v0: no tagged fields
			t.Fatalf("%s: %v", tt.file, err)
		}
		if resp.ErrorCode != tt.wantErr {
			t.Errorf("%s: error %d", tt.file, resp.ErrorCode)
		}
		if len(resp.FinalizedFeatures) != 0 || len(resp.SupportedFeatures) != 0 {
			t.Errorf("%s: features advertised", tt.file)
		}
		adv := versions.Advertised(false)
		if len(resp.ApiKeys) != len(adv) {
			t.Fatalf("%s: %d keys, want %d", tt.file, len(resp.ApiKeys), len(adv))
		}
		for i, k := range resp.ApiKeys {
			if k.ApiKey != adv[i].ApiKey || k.MinVersion != adv[i].MinVersion || k.MaxVersion != adv[i].MaxVersion {
				t.Errorf("%s: key %d advertised %d–%d", tt.file, k.ApiKey, k.MinVersion, k.MaxVersion)
			}
		}
	}
}

// undump reverses hex.Dump.
func undump(t *testing.T, dump string) []byte {
	t.Helper()
	var out []byte
	for _, line := range strings.Split(strings.TrimSpace(dump), "\n") {
		// "00000000  00 01 02 ...  |....|": hex bytes sit between the offset and the ASCII column.
		hexPart := line[10:min(len(line), 58)]
		b, err := hex.DecodeString(strings.ReplaceAll(hexPart, " ", ""))
		if err != nil {
			t.Fatalf("bad dump line %q: %v", line, err)
		}
		out = append(out, b...)
	}
	return out
}

// A truncated body at every accepted version of every listed API: the gateway answers
// INVALID_REQUEST where the response has a top-level error field at that version, and closes
// the connection otherwise. It never crashes.
func TestUndecodableBodies(t *testing.T) {
	g := startGateway(t, gatewayOpts{})
	for _, a := range versions.All() {
		for v := a.Min; v <= a.Max; v++ {
			req := kmsg.RequestForKey(a.Key)
			req.SetVersion(v)
			frame := kmsg.NewRequestFormatter().AppendRequest(nil, req, 9)
			// Replace the body with bytes no listed body can be: read as an int16 or int32
			// length, or as a compact (uvarint) length, 0x7f... declares far more than remains;
			// a body that takes no bytes leaves them trailing.
			header := 4 + 8 + 2 // length, fixed header, null client id
			if req.IsFlexible() {
				header++ // empty header tags
			}
			bad := append(frame[:header:header], 0x7f, 0xff, 0xff, 0xff)
			binary.BigEndian.PutUint32(bad, uint32(len(bad)-4))
			c := dialRaw(t, g.addr)
			if _, err := c.nc.Write(bad); err != nil {
				t.Fatal(err)
			}
			f := c.frame()
			name := kmsg.NameForKey(a.Key)
			if f == nil {
				if route := routes[a.Key]; route.invalid != nil && route.invalid(req) != nil {
					t.Errorf("%s v%d: closed, but the response has an error field", name, v)
				}
				continue
			}
			resp := req.ResponseKind()
			body := f[4:]
			if resp.IsFlexible() && a.Key != kmsg.ApiVersions.Int16() {
				body = body[1:]
			}
			if err := resp.ReadFrom(body); err != nil {
				t.Fatalf("%s v%d: %v", name, v, err)
			}
			if code := topLevelErrorCode(resp); code != kerr.InvalidRequest.Code {
				t.Errorf("%s v%d: error %d, want INVALID_REQUEST", name, v, code)
			}
		}
	}
	// The gateway is still serving.
	c := dialRaw(t, g.addr)
	c.roundTrip(kmsg.NewPtrApiVersionsRequest())
}

func topLevelErrorCode(resp kmsg.Response) int16 {
	switch r := resp.(type) {
	case *kmsg.ApiVersionsResponse:
		return r.ErrorCode
	case *kmsg.DescribeClusterResponse:
		return r.ErrorCode
	case *kmsg.DescribeACLsResponse:
		return r.ErrorCode
	case *kmsg.InitProducerIDResponse:
		return r.ErrorCode
	case *kmsg.FindCoordinatorResponse:
		return r.ErrorCode
	case *kmsg.JoinGroupResponse:
		return r.ErrorCode
	case *kmsg.SyncGroupResponse:
		return r.ErrorCode
	case *kmsg.HeartbeatResponse:
		return r.ErrorCode
	case *kmsg.LeaveGroupResponse:
		return r.ErrorCode
	case *kmsg.ListGroupsResponse:
		return r.ErrorCode
	case *kmsg.OffsetFetchResponse:
		return r.ErrorCode
	case *kmsg.OffsetDeleteResponse:
		return r.ErrorCode
	case *kmsg.FetchResponse:
		return r.ErrorCode
	case *kmsg.AddOffsetsToTxnResponse:
		return r.ErrorCode
	case *kmsg.EndTxnResponse:
		return r.ErrorCode
	case *kmsg.ConsumerGroupHeartbeatResponse:
		return r.ErrorCode
	}
	return -2
}
