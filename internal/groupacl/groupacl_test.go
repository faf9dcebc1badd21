package groupacl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAllowed(t *testing.T) {
	bindings := []Binding{
		{Principal: "alice", Group: "payments", Ops: Read},
		{Principal: "alice", Group: "audit-", Prefixed: true, Ops: Describe},
		{Principal: "*", Group: "shared", Ops: Read | Delete},
		{Principal: "monitor", Group: "*", Ops: Describe},
	}
	tests := []struct {
		def         Default
		user, group string
		want        Op
	}{
		{UserPrefix, "alice", "alice.orders", All},
		{UserPrefix, "alice", "alice", 0},      // the prefix ends with the separator
		{UserPrefix, "al", "alice.orders", 0},  // a shorter user name is no prefix of it
		{UserPrefix, "bob", "alice.orders", 0}, // another tenant's group
		{UserPrefix, "alice", "payments", Read | Describe},
		{UserPrefix, "alice", "payments-2", 0}, // literal is exact
		{UserPrefix, "alice", "audit-eu", Describe},
		{UserPrefix, "bob", "audit-eu", 0}, // alice's binding only
		{UserPrefix, "bob", "shared", All}, // wildcard principal; delete implies describe
		{UserPrefix, "monitor", "alice.orders", Describe},
		{None, "alice", "alice.orders", 0},
		{None, "alice", "payments", Read | Describe},
		{AllowAll, "bob", "alice.orders", All},
		{Topics, "alice", "alice.orders", 0}, // decided by internal/authorize
	}
	for _, tt := range tests {
		p, err := NewPolicy(tt.def, bindings)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Allowed(tt.user, tt.group); got != tt.want {
			t.Errorf("%s: %s on %s: %03b, want %03b", tt.def, tt.user, tt.group, got, tt.want)
		}
	}
	var zero *Policy
	if zero.Allowed("alice", "alice.x") != All || zero.Allowed("alice", "bob.x") != 0 {
		t.Error("a nil policy is not the user-prefix default")
	}
	if _, err := NewPolicy("everyone", nil); err == nil {
		t.Error("unknown default accepted")
	}
}

func TestLoad(t *testing.T) {
	write := func(text string) string {
		path := filepath.Join(t.TempDir(), "groups.toml")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	got, err := Load(write(`
[[group_acl]]
principal = "alice"
group = "payments"
operations = ["read"]

[[group_acl]]
principal = "*"
group = "team-"
pattern = "PREFIXED"
operations = ["describe", "delete"]
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Binding{{Principal: "alice", Group: "payments", Ops: Read}, {Principal: "*", Group: "team-", Prefixed: true, Ops: Describe | Delete}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for _, bad := range []struct{ text, says string }{
		{"[[group_acl]]\nprincipal = \"a\"\ngroup = \"g\"\noperations = [\"read\"]\nhost = \"*\"\n", "unknown keys: group_acl.host"},
		{"[[group_acls]]\n", "unknown keys"},
		{"[[group_acl]]\ngroup = \"g\"\noperations = [\"read\"]\n", "principal is required"},
		{"[[group_acl]]\nprincipal = \"a\"\noperations = [\"read\"]\n", "group is required"},
		{"[[group_acl]]\nprincipal = \"a\"\ngroup = \"g\"\n", "operations are required"},
		{"[[group_acl]]\nprincipal = \"a\"\ngroup = \"g\"\noperations = [\"write\"]\n", `operation "write"`},
		{"[[group_acl]]\nprincipal = \"a\"\ngroup = \"g\"\npattern = \"match\"\noperations = [\"read\"]\n", `pattern "match"`},
		{"[[group_acl]]\nprincipal = \"a\"\ngroup = \"*\"\npattern = \"prefixed\"\noperations = [\"read\"]\n", "literal"},
		{"[[group_acl]\n", "group ACL file"},
	} {
		if _, err := Load(write(bad.text)); err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%q: %v, want an error saying %q", bad.text, err, bad.says)
		}
	}
}
