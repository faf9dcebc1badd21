package groupacl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// fileFormat is the TOML group ACL document (docs/CONFIGURATION.md, "Group ACLs"):
//
//	[[group_acl]]
//	principal = "alice"          # Iggy user name, or "*" for every identified user
//	group = "payments"           # group name; with pattern = "prefixed" a prefix; "*" every group
//	pattern = "literal"          # literal (default) or prefixed
//	operations = ["read"]        # read, describe, delete, all
type fileFormat struct {
	GroupACL []fileBinding `toml:"group_acl"`
}

type fileBinding struct {
	Principal  string   `toml:"principal"`
	Group      string   `toml:"group"`
	Pattern    string   `toml:"pattern"`
	Operations []string `toml:"operations"`
}

var operationNames = map[string]Op{"read": Read, "describe": Describe, "delete": Delete, "all": All}

// Load reads the bindings of a TOML group ACL file. Unknown keys, patterns and operations are
// errors: a typo must not silently grant or withhold a group.
func Load(path string) ([]Binding, error) {
	var f fileFormat
	md, err := toml.DecodeFile(path, &f)
	if err != nil {
		return nil, fmt.Errorf("group ACL file %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		slices.Sort(keys)
		return nil, fmt.Errorf("group ACL file %s: unknown keys: %s", path, strings.Join(keys, ", "))
	}
	out := make([]Binding, 0, len(f.GroupACL))
	for i, fb := range f.GroupACL {
		b, err := fb.binding()
		if err == nil {
			err = b.validate()
		}
		if err != nil {
			return nil, fmt.Errorf("group ACL file %s: group_acl entry %d: %w", path, i+1, err)
		}
		out = append(out, b)
	}
	return out, nil
}

func (fb fileBinding) binding() (Binding, error) {
	b := Binding{Principal: fb.Principal, Group: fb.Group}
	switch strings.ToLower(fb.Pattern) {
	case "", "literal":
	case "prefixed":
		b.Prefixed = true
	default:
		return b, fmt.Errorf("pattern %q: want literal or prefixed", fb.Pattern)
	}
	for _, name := range fb.Operations {
		op, ok := operationNames[strings.ToLower(name)]
		if !ok {
			return b, fmt.Errorf("operation %q: want read, describe, delete or all", name)
		}
		b.Ops |= op
	}
	return b, nil
}
