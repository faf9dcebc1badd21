// Package groupacl holds the operator's rules for Kafka consumer groups: which identified
// principal (an Iggy user) may READ, DESCRIBE or DELETE which group, as Kafka's ACLs on the
// Group resource (docs/SECURITY.md, "Consumer groups"). Iggy has no permission on Kafka
// groups, so these rules live in the gateway's configuration: a TOML file of literal and
// prefixed bindings (GROUP_ACL_PATH) and a default for every principal (GROUP_ACL_DEFAULT).
//
// The package only matches names; internal/authorize applies the result to requests, together
// with what the Iggy permissions add (manage_servers: every group).
package groupacl

import (
	"fmt"
	"slices"
	"strings"
)

// Op is a set of Kafka operations on a group.
type Op uint8

// The group operations Kafka checks (Kafka's AclOperation): READ to join a group and to commit
// offsets, DESCRIBE to find its coordinator, describe or list it and fetch its offsets, DELETE
// to delete the group or its offsets.
const (
	Read Op = 1 << iota
	Describe
	Delete

	// All is Kafka's ALL: every operation on the group.
	All = Read | Describe | Delete
)

// Implied adds the operations Kafka implies: READ and DELETE imply DESCRIBE
// (AclEntry.supportedOperations and the authorizer's implicit DESCRIBE).
func (o Op) Implied() Op {
	if o&(Read|Delete) != 0 {
		o |= Describe
	}
	return o
}

// Has reports whether o holds every operation of want.
func (o Op) Has(want Op) bool { return o&want == want }

// Default is the rule for what no binding of the file grants.
type Default string

const (
	// UserPrefix: each principal may READ and DELETE (so DESCRIBE) the groups whose name starts
	// with its user name and a dot ("alice." for alice), and nothing else. The default.
	UserPrefix Default = "user-prefix"
	// None: only the file's bindings.
	None Default = "none"
	// Topics is the rule of earlier versions: a principal may use a group when it may poll
	// somewhere and may poll every topic the group has committed offsets for. It is no tenant
	// boundary (a principal can take a new group name first and lock its owner out), kept for
	// deployments whose clients use group names no binding can describe.
	Topics Default = "topics"
	// AllowAll: every identified principal may use every group, as a Kafka broker without an
	// authorizer. No tenant boundary.
	AllowAll Default = "all"
)

// Defaults lists the accepted defaults, the safe one first.
var Defaults = []Default{UserPrefix, None, Topics, AllowAll}

// PrefixSeparator follows the user name in the default prefix. Kafka group ids and Iggy user
// names may both contain it, so user "alice" also matches the groups of a user named
// "alice.x" (docs/SECURITY.md says to avoid such names or write bindings instead).
const PrefixSeparator = "."

// Wildcard is Kafka's name for every principal or, in a literal binding, every group.
const Wildcard = "*"

// Binding is one ALLOW rule: Principal (an Iggy user name, or Wildcard) may do Ops on the
// group named Group or, when Prefixed, on every group whose name starts with Group.
type Binding struct {
	Principal string
	Group     string
	Prefixed  bool
	Ops       Op
}

// Matches reports whether the binding applies to user's use of group.
func (b Binding) Matches(user, group string) bool {
	if b.Principal != Wildcard && b.Principal != user {
		return false
	}
	if b.Prefixed {
		return strings.HasPrefix(group, b.Group)
	}
	return b.Group == Wildcard || b.Group == group
}

// Policy is the whole rule set: the bindings of the file and the default. The zero value is
// the UserPrefix default without bindings.
type Policy struct {
	Default  Default
	Bindings []Binding
}

// NewPolicy checks def and the bindings.
func NewPolicy(def Default, bindings []Binding) (*Policy, error) {
	if !slices.Contains(Defaults, def) {
		return nil, fmt.Errorf("unknown default %q (want one of %s)", def, defaultsList())
	}
	for i, b := range bindings {
		if err := b.validate(); err != nil {
			return nil, fmt.Errorf("binding %d: %w", i+1, err)
		}
	}
	return &Policy{Default: def, Bindings: bindings}, nil
}

func defaultsList() string {
	names := make([]string, len(Defaults))
	for i, d := range Defaults {
		names[i] = string(d)
	}
	return strings.Join(names, ", ")
}

func (b Binding) validate() error {
	switch {
	case b.Principal == "":
		return fmt.Errorf("principal is required (an Iggy user name, or %q for every user)", Wildcard)
	case b.Group == "":
		return fmt.Errorf("group is required (a name, a prefix, or %q for every group)", Wildcard)
	case b.Prefixed && b.Group == Wildcard:
		// Kafka reads a prefixed "*" as the prefix "*"; an operator writing it means every
		// group, which is the literal wildcard.
		return fmt.Errorf("a prefixed %q would match only names starting with %q: write pattern = \"literal\" for every group", Wildcard, Wildcard)
	case b.Ops == 0:
		return fmt.Errorf("operations are required (read, describe, delete or all)")
	}
	return nil
}

// def returns the default, the zero value meaning UserPrefix.
func (p *Policy) def() Default {
	if p == nil || p.Default == "" {
		return UserPrefix
	}
	return p.Default
}

// Fallback is the default rule.
func (p *Policy) Fallback() Default { return p.def() }

// Allowed returns what user may do with group through the bindings and the UserPrefix or
// AllowAll default, implied operations included. Topics is not decided here (it needs the
// user's Iggy permissions and the group's offsets): see Fallback.
func (p *Policy) Allowed(user, group string) Op {
	var ops Op
	switch p.def() {
	case UserPrefix:
		if strings.HasPrefix(group, OwnPrefix(user)) {
			ops = All
		}
	case AllowAll:
		ops = All
	}
	if p != nil {
		for _, b := range p.Bindings {
			if b.Matches(user, group) {
				ops |= b.Ops
			}
		}
	}
	return ops.Implied()
}

// OwnPrefix is the group name prefix the UserPrefix default gives user.
func OwnPrefix(user string) string { return user + PrefixSeparator }

// For returns the bindings that apply to user (its own and the wildcard principal's), for
// DescribeAcls.
func (p *Policy) For(user string) []Binding {
	if p == nil {
		return nil
	}
	var out []Binding
	for _, b := range p.Bindings {
		if b.Principal == user || b.Principal == Wildcard {
			out = append(out, b)
		}
	}
	return out
}
