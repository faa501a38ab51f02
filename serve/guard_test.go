package serve_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
)

// Guard.Bearer keeps a program's handler to the page's tokens: a request
// gets in with a token (a bearer token, or ?token= in its address), as
// the person it names; without one, with a wrong one, with a cookie
// alone, it is refused (401); a post a browser says comes from another
// origin or site is refused (403) whatever it carries.
func TestGuardBearer(t *testing.T) {
	_, err := serve.NewGuard(nil, 1<<10)
	require.ErrorIs(t, err, serve.ErrNoToken)
	_, err = serve.NewGuard([]stock.ServeToken{{Name: "ana", Token: "short"}}, 1<<10)
	require.Error(t, err)

	const token = "a-token-of-thirty-two-characters"
	g, err := serve.NewGuard([]stock.ServeToken{{Name: "ana", Token: token}}, 1<<10)
	require.NoError(t, err)
	h := g.Bearer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := serve.IdentityOf(r.Context())
		require.True(t, ok)
		w.Write([]byte("hello " + id.Name))
	}))
	do := func(method, target string, header map[string]string) (int, string, http.Header) {
		r := httptest.NewRequest(method, target, strings.NewReader(`{}`))
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String(), w.Header()
	}
	for name, c := range map[string]struct {
		method, target string
		header         map[string]string
		code           int
	}{
		"bearer":             {"POST", "/mcp", map[string]string{"Authorization": "Bearer " + token}, 200},
		"token in address":   {"POST", "/mcp?token=" + token, nil, 200},
		"a GET from afar":    {"GET", "/mcp", map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example"}, 200},
		"no token":           {"POST", "/mcp", nil, 401},
		"wrong token":        {"POST", "/mcp", map[string]string{"Authorization": "Bearer " + strings.Repeat("x", 32)}, 401},
		"not bearer":         {"POST", "/mcp?token=" + token, map[string]string{"Authorization": "Basic " + token}, 401},
		"a cookie alone":     {"POST", "/mcp", map[string]string{"Cookie": "harness=" + token}, 401},
		"another origin":     {"POST", "/mcp", map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example"}, 403},
		"another site":       {"POST", "/mcp", map[string]string{"Authorization": "Bearer " + token, "Sec-Fetch-Site": "cross-site"}, 403},
		"its own origin":     {"POST", "/mcp", map[string]string{"Authorization": "Bearer " + token, "Origin": "http://example.com"}, 200},
		"token in address 2": {"DELETE", "/mcp?token=" + token, nil, 200},
	} {
		code, body, header := do(c.method, c.target, c.header)
		require.Equal(t, c.code, code, "%s: %s", name, body)
		switch code {
		case 200:
			require.Equal(t, "hello ana", body, name)
		case 401:
			require.Equal(t, `Bearer realm="harness"`, header.Get("WWW-Authenticate"), name)
		}
	}
}
