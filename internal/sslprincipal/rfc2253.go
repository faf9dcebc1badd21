package sslprincipal

import (
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"strings"
	"unicode/utf16"
)

// The RFC 2253 form of a certificate subject, built from its DER encoding as Java's
// X500Principal.getName() builds it: that string is what Kafka's SslPrincipalMapper matches
// rules against, so the same rules must see the same text here. Go's pkix.Name cannot serve:
// it keeps only the attributes it knows (dropping DC, UID and emailAddress), one value per
// attribute, and rebuilds the sequence in its own order.

// attribute is one AttributeTypeAndValue of a relative distinguished name.
type attribute struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// rdnSET is one relative distinguished name: a SET OF attributes (the name ending in SET makes
// encoding/asn1 expect a SET).
type rdnSET []attribute

// rfc2253Keywords are the attribute types RFC 2253 (section 2.3) names by keyword, the ones
// X500Principal writes by keyword; every other type is written as its dotted OID with the
// value in hexadecimal.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.6":                    "C",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// rfc2253Escaped are the characters escaped with a backslash wherever they occur, as
// X500Principal does (a superset of RFC 2253's minimum, which Kafka's rules are written for).
const rfc2253Escaped = ",=+<>#;\"\\"

// RFC2253 returns the RFC 2253 string of a DER-encoded distinguished name (a certificate's
// RawSubject): the relative distinguished names in reverse order, separated by commas, the
// attributes of a multi-valued one joined by '+' in their encoded order, known types by
// keyword with their string values escaped, others as OID=#hex of the value's DER encoding.
func RFC2253(der []byte) (string, error) {
	var seq []rdnSET
	rest, err := asn1.Unmarshal(der, &seq)
	if err != nil {
		return "", err
	}
	if len(rest) != 0 {
		return "", errors.New("trailing data after the distinguished name")
	}
	var b strings.Builder
	for i := len(seq) - 1; i >= 0; i-- {
		if i != len(seq)-1 {
			b.WriteByte(',')
		}
		for j, a := range seq[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			writeAttribute(&b, a)
		}
	}
	return b.String(), nil
}

func writeAttribute(b *strings.Builder, a attribute) {
	oid := a.Type.String()
	keyword, known := rfc2253Keywords[oid]
	var text string
	var isString bool
	if known {
		text, isString = stringValue(a.Value)
	}
	if !isString {
		if known {
			b.WriteString(keyword)
		} else {
			b.WriteString(oid)
		}
		b.WriteString("=#")
		b.WriteString(hex.EncodeToString(a.Value.FullBytes))
		return
	}
	b.WriteString(keyword)
	b.WriteByte('=')
	writeEscaped(b, text)
}

// stringValue decodes the directory string types X500Principal writes as text.
func stringValue(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal {
		return "", false
	}
	switch v.Tag {
	case asn1.TagUTF8String, asn1.TagPrintableString, asn1.TagIA5String, 27: // 27: GeneralString
		return string(v.Bytes), true
	case asn1.TagT61String: // read as ISO 8859-1, as Java does
		r := make([]rune, len(v.Bytes))
		for i, c := range v.Bytes {
			r[i] = rune(c)
		}
		return string(r), true
	case asn1.TagBMPString:
		if len(v.Bytes)%2 != 0 {
			return "", false
		}
		u := make([]uint16, len(v.Bytes)/2)
		for i := range u {
			u[i] = uint16(v.Bytes[2*i])<<8 | uint16(v.Bytes[2*i+1])
		}
		return string(utf16.Decode(u)), true
	}
	return "", false
}

// writeEscaped writes s with rfc2253Escaped characters escaped and its leading and trailing
// spaces escaped too (they would otherwise be trimmed by a parser).
func writeEscaped(b *strings.Builder, s string) {
	lead := len(s) - len(strings.TrimLeft(s, " "))
	trail := len(strings.TrimRight(s, " "))
	for i, c := range s {
		if strings.ContainsRune(rfc2253Escaped, c) || (c == ' ' && (i < lead || i >= trail)) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
}
