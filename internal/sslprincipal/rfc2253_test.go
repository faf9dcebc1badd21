package sslprincipal

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"
)

var (
	oidCN     = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidOU     = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidO      = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidSerial = asn1.ObjectIdentifier{2, 5, 4, 5}
	oidDC     = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}
	oidUID    = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}
	oidEmail  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
)

// str is a value with an explicit string type.
func str(tag int, s string) asn1.RawValue {
	return asn1.RawValue{Class: asn1.ClassUniversal, Tag: tag, Bytes: []byte(s)}
}

func atv(oid asn1.ObjectIdentifier, v any) pkix.AttributeTypeAndValue {
	if s, ok := v.(string); ok {
		v = str(asn1.TagUTF8String, s)
	}
	return pkix.AttributeTypeAndValue{Type: oid, Value: v}
}

// dn encodes RDNs in the order given (most significant first, as in the certificate).
func dn(t *testing.T, rdns ...[]pkix.AttributeTypeAndValue) []byte {
	t.Helper()
	seq := pkix.RDNSequence{}
	for _, r := range rdns {
		seq = append(seq, r)
	}
	der, err := asn1.Marshal(seq)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func one(oid asn1.ObjectIdentifier, v any) []pkix.AttributeTypeAndValue {
	return []pkix.AttributeTypeAndValue{atv(oid, v)}
}

// TestRFC2253 checks the string against what Java's X500Principal.getName() gives for the same
// names (the form Kafka's principal mapping rules are written against).
func TestRFC2253(t *testing.T) {
	o, ou, cn := one(oidO, "Example"), one(oidOU, "Tenants"), one(oidCN, "alice")
	cases := []struct {
		name string
		der  []byte
		want string
	}{
		{"plain", dn(t, o, ou, cn), "CN=alice,OU=Tenants,O=Example"},
		{"reversed order kept reversed", dn(t, cn, ou, o), "O=Example,OU=Tenants,CN=alice"},
		{"domain components", dn(t, one(oidDC, str(asn1.TagIA5String, "com")), one(oidDC, str(asn1.TagIA5String, "example")), o, ou, cn),
			"CN=alice,OU=Tenants,O=Example,DC=example,DC=com"},
		{"uid", dn(t, o, ou, cn, one(oidUID, "a1")), "UID=a1,CN=alice,OU=Tenants,O=Example"},
		{"email by OID in hex", dn(t, o, ou, cn, one(oidEmail, str(asn1.TagIA5String, "a@x"))),
			"1.2.840.113549.1.9.1=#1603614078,CN=alice,OU=Tenants,O=Example"},
		{"multi-valued RDN", dn(t, o, ou, []pkix.AttributeTypeAndValue{atv(oidCN, "alice"), atv(oidUID, "a1")}),
			"CN=alice+UID=a1,OU=Tenants,O=Example"},
		{"two common names, both kept", dn(t, o, ou, cn, one(oidCN, "mallory")), "CN=mallory,CN=alice,OU=Tenants,O=Example"},
		{"serial number is no RFC 2253 keyword", dn(t, one(oidSerial, str(asn1.TagPrintableString, "42")), cn),
			"CN=alice,2.5.4.5=#13023432"},
		{"escaping", dn(t, one(oidCN, ` a,b+c=d#e<f>g;h"i\j `)), `CN=\ a\,b\+c\=d\#e\<f\>g\;h\"i\\j\ `},
		{"printable, IA5 and T61 strings", dn(t, one(oidO, str(asn1.TagPrintableString, "P")), one(oidOU, str(asn1.TagIA5String, "I")), one(oidCN, str(asn1.TagT61String, "caf\xe9"))),
			"CN=café,OU=I,O=P"},
		{"BMP string", dn(t, one(oidCN, asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagBMPString, Bytes: []byte{0, 'h', 0x20, 0xac}})), "CN=h€"},
		{"non-string value of a known type in hex", dn(t, one(oidCN, 7)), "CN=#020107"},
		{"empty", dn(t), ""},
	}
	for _, c := range cases {
		got, err := RFC2253(c.der)
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if _, err := RFC2253([]byte{0x30, 0x05, 0x31}); err == nil {
		t.Error("truncated name accepted")
	}
	if _, err := RFC2253(append(dn(t, cn), 0)); err == nil {
		t.Error("trailing data accepted")
	}
}
