package wire

import "encoding/binary"

// This file is the protocol-version seam for sessions: the version constant, its
// compatibility gate and the login (Register) bodies. Protocol 0.12.0 (Iggy 0.10) adds a
// 32-byte bind secret after ClientVersionInfo; that change belongs here and in batch.go.

// ProtocolVersion is the packed binary protocol version this codec speaks: 0.11.0
// (major<<20 | minor<<10 | patch, with major and patch 0).
const ProtocolVersion uint32 = 11 << 10

// PackVersion packs a semantic version into the protocol's 10-bits-per-field form.
func PackVersion(major, minor, patch uint32) uint32 {
	return (major&0x3ff)<<20 | (minor&0x3ff)<<10 | patch&0x3ff
}

// VersionCompatible reports whether a server speaking server accepts a client speaking
// client: the server's major.minor window (minor bumps break compatibility under 0.x).
func VersionCompatible(client, server uint32) bool {
	return client >= server&^0x3ff && client>>10 <= server>>10
}

// ClientVersionInfo opens every login body.
type ClientVersionInfo struct {
	ProtocolVersion uint32
	SDKName         string // 1..255 bytes
	SDKVersion      string // 1..255 bytes
}

func appendClientVersionInfo(dst []byte, v ClientVersionInfo) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, v.ProtocolVersion)
	dst = AppendName(dst, v.SDKName)
	return AppendName(dst, v.SDKVersion)
}

// AppendLoginUser appends the LOGIN_REGISTER (code 40) body:
// CVI [username:Name][password_len:u8][password][context_len:u32 = 0].
func AppendLoginUser(dst []byte, v ClientVersionInfo, username, password string) []byte {
	dst = appendClientVersionInfo(dst, v)
	dst = AppendName(dst, username)
	dst = append(dst, byte(len(password)))
	dst = append(dst, password...)
	return binary.LittleEndian.AppendUint32(dst, 0)
}

// AppendLoginPAT appends the LOGIN_REGISTER_WITH_PAT (code 45) body:
// CVI [token:Name][context_len:u32 = 0].
func AppendLoginPAT(dst []byte, v ClientVersionInfo, token string) []byte {
	dst = appendClientVersionInfo(dst, v)
	dst = AppendName(dst, token)
	return binary.LittleEndian.AppendUint32(dst, 0)
}

// Login is a decoded Register body: either Username/Password or Token is set.
type Login struct {
	Version  ClientVersionInfo
	Username string
	Password string
	Token    string
	Context  string
}

// DecodeLogin decodes a Register body. Like the server it tries the username/password form
// first and then the token form; each must consume the whole body.
func DecodeLogin(body []byte) (Login, error) {
	r := NewReader(body)
	var l Login
	l.Version.ProtocolVersion = r.U32("protocol version")
	l.Version.SDKName = r.Name("sdk name")
	l.Version.SDKVersion = r.Name("sdk version")
	if err := r.Err(); err != nil {
		return l, err
	}
	tail := r.Rest()

	u := NewReader(tail)
	l.Username = u.Name("username")
	l.Password = string(u.ShortBytes("password"))
	l.Context = string(u.LongBytes("context"))
	if u.Done("login") == nil {
		return l, nil
	}

	l.Username, l.Password = "", ""
	t := NewReader(tail)
	l.Token = t.Name("token")
	l.Context = string(t.LongBytes("context"))
	if err := t.Done("login"); err != nil {
		return Login{}, formatErr(codeInvalidFormat, "login body is neither a user nor a token login")
	}
	return l, nil
}

// LoginReply is the payload of a successful Register reply (after the result section).
type LoginReply struct {
	UserID                uint32
	Session               uint64
	ServerProtocolVersion uint32
	ServerVersion         string
}

// AppendLoginReply appends the login reply payload (without the result section).
func AppendLoginReply(dst []byte, l LoginReply) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, l.UserID)
	dst = binary.LittleEndian.AppendUint64(dst, l.Session)
	dst = binary.LittleEndian.AppendUint32(dst, l.ServerProtocolVersion)
	return AppendName(dst, l.ServerVersion)
}

// DecodeLoginReply decodes the login reply payload and rejects session 0.
func DecodeLoginReply(b []byte) (LoginReply, error) {
	r := NewReader(b)
	l := LoginReply{
		UserID:                r.U32("user id"),
		Session:               r.U64("session"),
		ServerProtocolVersion: r.U32("server protocol version"),
		ServerVersion:         r.Name("server version"),
	}
	// Trailing bytes are tolerated: a later patch release may append fields.
	if err := r.Err(); err != nil {
		return LoginReply{}, err
	}
	if l.Session == 0 {
		return LoginReply{}, formatErr(codeInvalidFormat, "login reply with session 0")
	}
	return l, nil
}
