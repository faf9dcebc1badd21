package sslprincipal

import (
	"errors"
	"testing"
)

// kafkaRules are the rules of Kafka's documentation (security.html, "Customizing SSL User
// Name") and of its SslPrincipalMapperTest.
const kafkaRules = `RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,
RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,
RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L,
DEFAULT`

func TestMapKafkaExamples(t *testing.T) {
	m, err := Parse(kafkaRules)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ subject, want string }{
		{"CN=serviceuser,OU=ServiceUsers,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "serviceuser"},
		{"CN=adminUser,OU=Admin,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "adminuser@admin"},
		{"CN=kafka1,OU=Kafka,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "kafka1@kafka"},
		{"cn=Kafka2.example", "kafka2.example"},
		{"OU=NoCommonName", "OU=NoCommonName"}, // DEFAULT
	}
	for _, tt := range tests {
		got, err := m.Map(tt.subject)
		if err != nil || got != tt.want {
			t.Errorf("Map(%q) = %q, %v; want %q", tt.subject, got, err, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		spec    string
		subject string
		want    string // "" with wantErr false: ErrNoMatch
		wantErr bool
	}{
		{spec: "", subject: "CN=a", want: "CN=a"},
		{spec: "DEFAULT", subject: "CN=a,O=b", want: "CN=a,O=b"},
		{spec: "RULE:^CN=(.*?),.*$/$1/U", subject: "CN=alice,O=x", want: "ALICE"},
		{spec: "RULE:^CN=([^,]*)$/$1/", subject: "CN=bob", want: "bob"},
		{spec: "RULE:^CN=([^,]*)$/$1/", subject: "CN=bob,O=x", want: ""},             // no match, no DEFAULT
		{spec: `RULE:^CN=(.*)$/u\/$1/`, subject: "CN=x", want: "u/x"},                // escaped slash in the replacement
		{spec: `RULE:^CN=a\/b$/ok/`, subject: "CN=a/b", want: "ok"},                  // escaped slash in the pattern
		{spec: `RULE:^CN=(.*)$/\$1/`, subject: "CN=x", want: "$1"},                   // escaped dollar is literal
		{spec: " RULE:^CN=(.*)$/$1/L , DEFAULT ", subject: "O=only", want: "O=only"}, // spaces around rules
		{spec: "RULE:^(?P<n>[a-z]+)$/${n}!/", subject: "abc", want: "abc!"},          // named group
		{spec: "RULE:^CN=(.*)$/$1/X", wantErr: true},                                 // bad flag
		{spec: "RULE:^CN=(.*)$/$1", wantErr: true},                                   // missing slash
		{spec: "DEFAULT,", wantErr: true},                                            // trailing comma
		{spec: "DEFAULT junk", wantErr: true},                                        // junk after a rule
		{spec: "RULE:([/x/", wantErr: true},                                          // bad regexp
		{spec: "PATTERN:x/y/", wantErr: true},                                        // unknown rule kind
	}
	for _, tt := range tests {
		m, err := Parse(tt.spec)
		if tt.wantErr {
			if err == nil {
				t.Errorf("Parse(%q) = %v, want an error", tt.spec, m)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.spec, err)
			continue
		}
		got, err := m.Map(tt.subject)
		if tt.want == "" {
			if !errors.Is(err, ErrNoMatch) {
				t.Errorf("Parse(%q).Map(%q) = %q, %v; want no match", tt.spec, tt.subject, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q).Map(%q) = %q, %v; want %q", tt.spec, tt.subject, got, err, tt.want)
		}
	}
}

// The rule list round-trips through String.
func TestString(t *testing.T) {
	m, err := Parse(kafkaRules)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(m.String())
	if err != nil || again.String() != m.String() {
		t.Fatalf("%q -> %q, %v", m.String(), again, err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{kafkaRules, "", "DEFAULT", "RULE:^CN=(.*)$/$1/L", `RULE:a\/b/c\/d/U,DEFAULT`, "RULE://", "RULE:(/x/,"} {
		f.Add(s, "CN=alice,OU=Users,O=Example")
	}
	f.Fuzz(func(t *testing.T, spec, subject string) {
		m, err := Parse(spec)
		if err != nil {
			return
		}
		if _, err := Parse(m.String()); err != nil {
			t.Fatalf("String() of %q does not parse: %q: %v", spec, m.String(), err)
		}
		_, _ = m.Map(subject) // must not panic
	})
}
