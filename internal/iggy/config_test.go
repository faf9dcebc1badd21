package iggy

import (
	"strings"
	"testing"
)

func TestConfigNormalize(t *testing.T) {
	c, err := Config{Addr: "127.0.0.1:8090", Username: "iggy", Password: "iggy"}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if c.PoolSize != DefaultPoolSize || c.PingInterval != DefaultPingInterval || c.DialTimeout != DefaultDialTimeout ||
		c.RequestTimeout != DefaultRequestTimeout || c.SDKName == "" || c.SDKVersion == "" || c.TLS != nil ||
		c.FailoverTimeout != DefaultFailoverTimeout || c.RosterInterval != DefaultRosterInterval {
		t.Fatalf("defaults not applied: %+v", c)
	}
	// Without a TLS domain each connection checks the host it dials: seeds and roster nodes.
	c, err = Config{Addr: "iggy-0.example:8090, iggy-1.example:8090", Token: "t", TLSEnabled: true}.normalize()
	if err != nil || c.TLS == nil || c.TLS.ServerName != "" {
		t.Fatalf("TLS without a domain: %+v, %v", c, err)
	}
	if got := strings.Join(c.seeds(), " "); got != "iggy-0.example:8090 iggy-1.example:8090" {
		t.Errorf("seeds = %q", got)
	}
	for addr, want := range map[string]string{"iggy-1.example:8090": "iggy-1.example", "10.0.0.3:8090": "10.0.0.3"} {
		if got := c.tlsFor(addr).ServerName; got != want {
			t.Errorf("TLS server name for %s = %q, want %q", addr, got, want)
		}
	}
	c, err = Config{Addr: "iggy-0.example:8090", Token: "t", TLSEnabled: true, TLSDomain: "iggy.example"}.normalize()
	if err != nil || c.tlsFor("10.0.0.3:8090").ServerName != "iggy.example" {
		t.Fatalf("TLS domain not used for every node: %+v, %v", c, err)
	}
	for name, bad := range map[string]Config{
		"no address":    {Username: "iggy"},
		"no username":   {Addr: "a:1"},
		"long password": {Addr: "a:1", Username: "iggy", Password: strings.Repeat("p", 256)},
		"long token":    {Addr: "a:1", Token: strings.Repeat("t", 256)},
		"long sdk name": {Addr: "a:1", Username: "iggy", SDKName: strings.Repeat("s", 256)},
		"bad address":   {Addr: "nohostport", Username: "iggy"},
		"bad seed":      {Addr: "a:1,nohostport", Username: "iggy"},
	} {
		if _, err := bad.normalize(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCodeName(t *testing.T) {
	if CodeName(CodeStreamIDNotFound) != "stream_id_not_found" || CodeName(99999) != "code_99999" {
		t.Fatal("CodeName")
	}
	err := &Error{Code: CodeTopicNameNotFound, Op: "get_topic"}
	if err.Error() != "iggy get_topic: error 2011 (topic_name_not_found)" {
		t.Fatalf("Error() = %q", err.Error())
	}
}
