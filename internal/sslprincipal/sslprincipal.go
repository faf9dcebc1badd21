// Package sslprincipal maps the subject of a client certificate to a user name with rules in
// the syntax of Kafka's ssl.principal.mapping.rules:
//
//	RULE:pattern/replacement/[L|U], ..., DEFAULT
//
// Rules are tried in order; the first whose pattern matches the whole subject (an RFC 2253
// distinguished name such as "CN=alice,OU=Users,O=Example") gives the name: every match of the
// pattern in the subject is replaced by the replacement ($1, ${name} refer to groups; a
// backslash makes the next character literal), then lower-cased (L) or upper-cased (U).
// DEFAULT gives the subject unchanged. A subject no rule matches has no name. Commas separate
// rules; a pattern may itself contain commas, and "\/" writes a slash inside a pattern or
// replacement.
//
// Patterns are Go regular expressions (RE2): the same syntax as Java's for the patterns Kafka
// documents, without backreferences or lookaround.
package sslprincipal

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Mapper applies a list of rules. The zero value has no rules and maps nothing.
type Mapper struct {
	rules []rule
}

type rule struct {
	isDefault   bool
	pattern     *regexp.Regexp // whole-subject match
	search      *regexp.Regexp // the pattern as written, for the replacement
	replacement string         // Go template syntax
	lower       bool
	upper       bool
	text        string // as configured, for String
}

// ErrNoMatch is a subject no rule maps.
var ErrNoMatch = errors.New("no principal mapping rule matches the certificate subject")

// ruleSyntax is Kafka's rule grammar (SslPrincipalMapper.RULE_PATTERN): DEFAULT, or RULE:
// with a pattern and a replacement made of escapes or characters other than backslash and
// slash, and an optional L or U.
var ruleSyntax = regexp.MustCompile(`^\s*(?:(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?))\s*(?:,|$)`)

// Parse reads a comma-separated rule list. An empty list means DEFAULT, as in Kafka.
func Parse(spec string) (*Mapper, error) {
	rest := strings.TrimSpace(spec)
	if rest == "" {
		return &Mapper{rules: []rule{{isDefault: true, text: "DEFAULT"}}}, nil
	}
	m := &Mapper{}
	for {
		loc := ruleSyntax.FindStringSubmatchIndex(rest)
		if loc == nil {
			return nil, fmt.Errorf("invalid principal mapping rule at %q: expected RULE:pattern/replacement/[LU] or DEFAULT", clip(rest))
		}
		r, err := newRule(rest, loc)
		if err != nil {
			return nil, err
		}
		m.rules = append(m.rules, r)
		consumed := rest[:loc[1]]
		rest = strings.TrimSpace(rest[loc[1]:])
		if !strings.HasSuffix(consumed, ",") { // the rule ended the list
			return m, nil
		}
		if rest == "" {
			return nil, errors.New("invalid principal mapping rules: trailing comma")
		}
	}
}

func newRule(s string, loc []int) (rule, error) {
	group := func(i int) (string, bool) {
		if loc[2*i] < 0 {
			return "", false
		}
		return s[loc[2*i]:loc[2*i+1]], true
	}
	text := strings.TrimSpace(strings.TrimSuffix(s[loc[0]:loc[1]], ","))
	if _, ok := group(1); ok {
		return rule{isDefault: true, text: text}, nil
	}
	pat, _ := group(2)
	repl, _ := group(3)
	flag, _ := group(4)
	pat = strings.ReplaceAll(pat, `\/`, "/")
	search, err := regexp.Compile(pat)
	if err != nil {
		return rule{}, fmt.Errorf("invalid principal mapping rule %q: %v", text, err)
	}
	whole := regexp.MustCompile(`^(?:` + pat + `)$`) // compiles: pat does
	return rule{
		pattern: whole, search: search, replacement: goTemplate(repl),
		lower: flag == "L", upper: flag == "U", text: text,
	}, nil
}

// goTemplate turns a Java replacement string ($n, ${name}, \x for a literal x) into
// regexp.Expand syntax.
func goTemplate(java string) string {
	var b strings.Builder
	for i := 0; i < len(java); i++ {
		switch c := java[i]; {
		case c == '\\' && i+1 < len(java):
			i++
			if java[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(java[i])
			}
		case c == '$' && i+1 < len(java) && java[i+1] >= '0' && java[i+1] <= '9':
			j := i + 1
			for j < len(java) && java[j] >= '0' && java[j] <= '9' {
				j++
			}
			b.WriteString("${" + java[i+1:j] + "}")
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Map returns the name the first matching rule gives subject, or ErrNoMatch.
func (m *Mapper) Map(subject string) (string, error) {
	for _, r := range m.rules {
		if r.isDefault {
			return subject, nil
		}
		if !r.pattern.MatchString(subject) {
			continue
		}
		name := r.search.ReplaceAllString(subject, r.replacement)
		switch {
		case r.lower:
			name = strings.ToLower(name)
		case r.upper:
			name = strings.ToUpper(name)
		}
		return name, nil
	}
	return "", ErrNoMatch
}

// String lists the rules as configured.
func (m *Mapper) String() string {
	texts := make([]string, len(m.rules))
	for i, r := range m.rules {
		texts[i] = r.text
	}
	return strings.Join(texts, ",")
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
