package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/groupacl"
)

func TestGroupACL(t *testing.T) {
	sasl := []string{"IGGY_KAFKA_SASL_ENABLED=true", "IGGY_KAFKA_BRIDGE_ENABLED=true", "IGGY_KAFKA_IGGY_PASSWORD=p"}
	path := filepath.Join(t.TempDir(), "groups.toml")
	if err := os.WriteFile(path, []byte("[[group_acl]]\nprincipal = \"alice\"\ngroup = \"payments\"\noperations = [\"read\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	c, err := load(t, nil, sasl...)
	if err != nil {
		t.Fatal(err)
	}
	if c.GroupACL.Fallback() != groupacl.UserPrefix || len(c.GroupACL.Bindings) != 0 || len(c.Warnings) != 0 {
		t.Errorf("default: %+v, warnings %v", c.GroupACL, c.Warnings)
	}

	c, err = load(t, nil, append(sasl, "IGGY_KAFKA_GROUP_ACL_PATH="+path, "IGGY_KAFKA_GROUP_ACL_DEFAULT=none")...)
	if err != nil {
		t.Fatal(err)
	}
	if c.GroupACL.Fallback() != groupacl.None || !c.GroupACL.Allowed("alice", "payments").Has(groupacl.Read) || c.GroupACL.Allowed("alice", "alice.x") != 0 {
		t.Errorf("file and none: %+v", c.GroupACL)
	}

	for _, open := range []string{"topics", "all"} {
		c, err = load(t, nil, append(sasl, "IGGY_KAFKA_GROUP_ACL_DEFAULT="+open)...)
		if err != nil || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "no tenant boundary") {
			t.Errorf("%s: %v, warnings %v: want a warning", open, err, c.Warnings)
		}
	}

	for _, bad := range []struct {
		env  []string
		says string
	}{
		{append(sasl, "IGGY_KAFKA_GROUP_ACL_DEFAULT=everyone"), "IGGY_KAFKA_GROUP_ACL_DEFAULT"},
		{append(sasl, "IGGY_KAFKA_GROUP_ACL_PATH="+filepath.Join(t.TempDir(), "missing.toml")), "IGGY_KAFKA_GROUP_ACL_PATH"},
		{[]string{"IGGY_KAFKA_GROUP_ACL_PATH=" + path}, "identified principals"},
		{[]string{"IGGY_KAFKA_GROUP_ACL_DEFAULT=none"}, "identified principals"},
	} {
		if _, err := load(t, nil, bad.env...); err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%v: %v, want an error naming %s", bad.env, err, bad.says)
		}
	}
}
