package metrics

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// Auth is the credentials /metrics asks for (docs/METRICS.md, "Access"): HTTP basic
// authentication with Username and Password, a bearer token, or either when both are set.
// The zero value asks for nothing.
type Auth struct {
	Username, Password string
	BearerToken        string
}

func (a Auth) enabled() bool { return a.Username != "" || a.BearerToken != "" }

// Protect wraps h so that /metrics answers 401 without the credentials of a. /healthz and
// /readyz stay open: container and orchestrator probes call them without credentials, and
// they tell only whether the gateway is up and ready.
func Protect(h http.Handler, a Auth) http.Handler {
	if !a.enabled() {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" && !a.allows(r) {
			if a.Username != "" {
				w.Header().Add("WWW-Authenticate", `Basic realm="iggy-gateway-kafka metrics", charset="UTF-8"`)
			}
			if a.BearerToken != "" {
				w.Header().Add("WWW-Authenticate", `Bearer realm="iggy-gateway-kafka metrics"`)
			}
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (a Auth) allows(r *http.Request) bool {
	if a.Username != "" {
		if user, pass, ok := r.BasicAuth(); ok && equal(user, a.Username) && equal(pass, a.Password) {
			return true
		}
	}
	if a.BearerToken != "" {
		scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if ok && strings.EqualFold(scheme, "Bearer") && equal(strings.TrimSpace(token), a.BearerToken) {
			return true
		}
	}
	return false
}

// equal compares in time independent of where the strings differ, and of their lengths
// (through fixed-size digests).
func equal(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}
