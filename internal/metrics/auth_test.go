package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// /metrics asks for the configured credentials; the probes stay open.
func TestProtect(t *testing.T) {
	h := New().Handler(func(context.Context) error { return nil })
	type req struct {
		path, user, pass, bearer string
		want                     int
	}
	for _, tc := range []struct {
		name string
		auth Auth
		reqs []req
	}{
		{"off", Auth{}, []req{{path: "/metrics", want: 200}}},
		{"basic", Auth{Username: "prom", Password: "s3cret"}, []req{
			{path: "/metrics", want: 401},
			{path: "/metrics", user: "prom", pass: "s3cret", want: 200},
			{path: "/metrics", user: "prom", pass: "wrong", want: 401},
			{path: "/metrics", user: "other", pass: "s3cret", want: 401},
			{path: "/metrics", bearer: "s3cret", want: 401},
			{path: "/healthz", want: 200},
			{path: "/readyz", want: 200},
		}},
		{"bearer", Auth{BearerToken: "tok"}, []req{
			{path: "/metrics", want: 401},
			{path: "/metrics", bearer: "tok", want: 200},
			{path: "/metrics", bearer: "tok2", want: 401},
			{path: "/metrics", user: "x", pass: "tok", want: 401},
		}},
		{"either", Auth{Username: "prom", Password: "p", BearerToken: "tok"}, []req{
			{path: "/metrics", user: "prom", pass: "p", want: 200},
			{path: "/metrics", bearer: "tok", want: 200},
			{path: "/metrics", want: 401},
		}},
	} {
		p := Protect(h, tc.auth)
		for _, r := range tc.reqs {
			hr := httptest.NewRequest(http.MethodGet, r.path, nil)
			if r.user != "" {
				hr.SetBasicAuth(r.user, r.pass)
			}
			if r.bearer != "" {
				hr.Header.Set("Authorization", "Bearer "+r.bearer)
			}
			w := httptest.NewRecorder()
			p.ServeHTTP(w, hr)
			if w.Code != r.want {
				t.Errorf("%s: %s (user %q, bearer %q): %d, want %d", tc.name, r.path, r.user, r.bearer, w.Code, r.want)
			}
			if w.Code == 401 && w.Header().Get("WWW-Authenticate") == "" {
				t.Errorf("%s: 401 without WWW-Authenticate", tc.name)
			}
		}
	}
}
