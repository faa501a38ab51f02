package mcp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/mcp"
)

// authServer is an OAuth 2.1 authorization server written for the test:
// metadata (RFC 8414), dynamic registration (RFC 7591), authorization
// code with PKCE S256 (the authorize endpoint answers at once, as a
// person who approves), refresh, resource indicators (RFC 8707), and
// revocation by the test.
type authServer struct {
	*httptest.Server
	t *testing.T

	mu        sync.Mutex // guards all below
	clients   map[string]bool
	codes     map[string]grant
	access    map[string]grant
	refresh   map[string]grant
	expiresIn int
	refreshes int
	resources []string
	// hugeToken makes the token endpoint answer with a body of this size.
	hugeToken int64
	// metadata, when set, changes the metadata document served.
	metadata func(map[string]any)
}

type grant struct {
	client, challenge, resource, scope, redirect string
	expiry                                       time.Time
}

func newAuthServer(t *testing.T) *authServer {
	a := &authServer{t: t, clients: map[string]bool{}, codes: map[string]grant{}, access: map[string]grant{},
		refresh: map[string]grant{}, expiresIn: 3600}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		md := map[string]any{"issuer": a.URL, "authorization_endpoint": a.URL + "/authorize", "token_endpoint": a.URL + "/token",
			"registration_endpoint": a.URL + "/register", "code_challenge_methods_supported": []string{"S256"},
			"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
			"token_endpoint_auth_methods_supported": []string{"none"}, "scopes_supported": []string{"tools", "offline_access"}}
		a.mu.Lock()
		if a.metadata != nil {
			a.metadata(md)
		}
		a.mu.Unlock()
		writeJSON(w, 200, md)
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		for _, u := range req.RedirectURIs {
			if !strings.HasPrefix(u, "http://127.0.0.1:") {
				writeJSON(w, 400, map[string]string{"error": "invalid_redirect_uri"})
				return
			}
		}
		id := "client-" + rand.Text()[:8]
		a.mu.Lock()
		a.clients[id] = true
		a.mu.Unlock()
		writeJSON(w, 201, map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		a.mu.Lock()
		defer a.mu.Unlock()
		if !a.clients[q.Get("client_id")] || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("response_type") != "code" {
			http.Error(w, "bad authorization request", 400)
			return
		}
		code := rand.Text()
		a.codes[code] = grant{client: q.Get("client_id"), challenge: q.Get("code_challenge"), resource: q.Get("resource"),
			scope: q.Get("scope"), redirect: q.Get("redirect_uri")}
		a.resources = append(a.resources, q.Get("resource"))
		back, _ := url.Parse(q.Get("redirect_uri"))
		bq := back.Query()
		bq.Set("code", code)
		bq.Set("state", q.Get("state"))
		back.RawQuery = bq.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.hugeToken > 0 {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"access_token":"`))
			chunk := []byte(strings.Repeat("a", 1<<16))
			for n := int64(0); n < a.hugeToken; n += int64(len(chunk)) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
			return
		}
		var g grant
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			c, ok := a.codes[r.Form.Get("code")]
			delete(a.codes, r.Form.Get("code"))
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge || r.Form.Get("resource") != c.resource ||
				r.Form.Get("redirect_uri") != c.redirect {
				writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
				return
			}
			g = c
		case "refresh_token":
			c, ok := a.refresh[r.Form.Get("refresh_token")]
			if !ok || r.Form.Get("resource") != c.resource || r.Form.Get("client_id") != c.client {
				writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "\x1b[31mrevoked"})
				return
			}
			delete(a.refresh, r.Form.Get("refresh_token"))
			a.refreshes++
			g = c
		default:
			writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		g.expiry = time.Now().Add(time.Duration(a.expiresIn) * time.Second)
		at, rt := "at-"+rand.Text(), "rt-"+rand.Text()
		a.access[at], a.refresh[rt] = g, g
		writeJSON(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": a.expiresIn, "refresh_token": rt, "scope": g.scope})
	})
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "" {
			t.Errorf("the settings' headers reached the authorization server: %s %s", r.Method, r.URL.Path)
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(a.Close)
	return a
}

// revoke forgets every token given.
func (a *authServer) revoke() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.access, a.refresh = map[string]grant{}, map[string]grant{}
}

func (a *authServer) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	g, ok := a.access[token]
	if !ok || time.Now().After(g.expiry) {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: strings.Fields(g.scope), Expiration: g.expiry}, nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// protectedServer is a go-sdk MCP server at /mcp behind the go-sdk's
// bearer middleware, demanding scope "tools", with its protected
// resource metadata (RFC 9728) naming as.
type protectedServer struct {
	*httptest.Server
	prm  func(map[string]any)
	hits atomic.Int64

	mu      sync.Mutex // guards methods and need
	methods []string   // the JSON-RPC methods posted, in order
	// need, when set, is a scope every request's token must also hold:
	// one without it is refused 403 insufficient_scope (step-up).
	need string
}

func newProtectedServer(t *testing.T, as *authServer) *protectedServer {
	p := &protectedServer{}
	srv := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "whoami", Description: "says who"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "you"}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		md := map[string]any{"resource": p.URL + "/mcp", "authorization_servers": []string{as.URL}, "scopes_supported": []string{"tools"}}
		if p.prm != nil {
			p.prm(md)
		}
		writeJSON(w, 200, md)
	})
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		p.mu.Lock()
		need := p.need
		p.mu.Unlock()
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && need != "" {
			as.mu.Lock()
			g, known := as.access[tok]
			as.mu.Unlock()
			if known && !slices.Contains(strings.Fields(g.scope), need) {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="tools %s", resource_metadata="%s"`, need, p.URL+"/.well-known/oauth-protected-resource/mcp"))
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				Method string `json:"method"`
			}
			json.Unmarshal(body, &m)
			p.mu.Lock()
			p.methods = append(p.methods, m.Method)
			p.mu.Unlock()
		}
		auth.RequireBearerToken(as.verify, &auth.RequireBearerTokenOptions{
			ResourceMetadataURL: p.URL + "/.well-known/oauth-protected-resource/mcp", Scopes: []string{"tools"}})(h).ServeHTTP(w, r)
	}))
	p.Server = httptest.NewServer(mux)
	t.Cleanup(p.Close)
	return p
}

// browser is a person who approves: it follows the authorization URL,
// and its redirect back to the local callback.
type browser struct {
	opened atomic.Int64
}

func (b *browser) open(u string) error {
	b.opened.Add(1)
	res, err := http.Get(u)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		return fmt.Errorf("the browser got %s", res.Status)
	}
	return nil
}

func connectRemote(t *testing.T, url string, store *mcp.TokenStore) mcp.Status {
	t.Helper()
	c, err := mcp.Connect(context.Background(), mcp.Servers{"remote": {URL: url}}, mcp.Options{Workspace: t.TempDir(), Tokens: store, ConnectTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.Status()[0]
}

func TestOAuthLogin(t *testing.T) {
	as := newAuthServer(t)
	ps := newProtectedServer(t, as)
	store := &mcp.TokenStore{Dir: filepath.Join(t.TempDir(), "harness", "mcp-tokens")}
	// The settings' headers go to the server only, never to its
	// authorization server.
	srv := mcp.Server{URL: ps.URL + "/mcp", Headers: map[string]string{"X-Api-Key": "for-the-server-only"}}

	// Before a login: the server refuses, and the status says how to log in.
	st := connectRemote(t, srv.URL, store)
	if st.State != mcp.Failed || !strings.Contains(st.Error, "harness mcp login remote") {
		t.Fatalf("before login: %s %q, want failed naming the login", st.State, st.Error)
	}

	var b browser
	res, err := mcp.Login(context.Background(), "remote", srv, mcp.LoginOptions{Store: *store, Open: b.open, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if b.opened.Load() != 1 || !res.Refreshable || res.Tools != 1 {
		t.Fatalf("login: opened %d, refreshable %v, %d tools", b.opened.Load(), res.Refreshable, res.Tools)
	}
	// The pinned revision: initialize first, never the draft's
	// server/discover.
	ps.mu.Lock()
	methods := slices.Clone(ps.methods)
	ps.mu.Unlock()
	if slices.Contains(methods, "server/discover") || methods[0] != "initialize" {
		t.Fatalf("methods posted: %q", methods)
	}
	as.mu.Lock()
	resources := as.resources
	as.mu.Unlock()
	if len(resources) != 1 || resources[0] != srv.URL {
		t.Fatalf("resource indicators sent %q, want [%q]", resources, srv.URL)
	}
	// The store: 0700, one 0600 file.
	fi, err := os.Stat(store.Dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("store dir: %v %v", fi.Mode(), err)
	}
	files, _ := filepath.Glob(filepath.Join(store.Dir, "*"))
	if len(files) != 1 {
		t.Fatalf("store holds %q", files)
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v", fi.Mode())
	}

	// Logged in: connected, the tool listed.
	st = connectRemote(t, srv.URL, store)
	if st.State != mcp.Connected || len(st.Tools) != 1 {
		t.Fatalf("after login: %s %q %v", st.State, st.Error, st.Tools)
	}
	// Another server's URL gets nothing of it.
	other := newProtectedServer(t, as)
	if st := connectRemote(t, other.URL+"/mcp", store); st.State != mcp.Failed {
		t.Fatalf("another server: %s, want failed (no token of the first is sent)", st.State)
	}

	// An expired token is refreshed (with the resource), and kept.
	before, _ := os.ReadFile(files[0])
	as.mu.Lock()
	for k, g := range as.access {
		g.expiry = time.Now().Add(-time.Second)
		as.access[k] = g
	}
	as.mu.Unlock()
	st = connectRemote(t, srv.URL, store)
	as.mu.Lock()
	refreshes := as.refreshes
	as.mu.Unlock()
	after, _ := os.ReadFile(files[0])
	if st.State != mcp.Connected || refreshes != 1 || string(before) == string(after) {
		t.Fatalf("expired token: %s %q, %d refreshes, store changed %v", st.State, st.Error, refreshes, string(before) != string(after))
	}

	// Revoked (access and refresh tokens): a person must log in again.
	as.revoke()
	st = connectRemote(t, srv.URL, store)
	if st.State != mcp.Failed || !strings.Contains(st.Error, "harness mcp login remote") || strings.Contains(st.Error, "\x1b") {
		t.Fatalf("revoked: %s %q", st.State, st.Error)
	}
	if gone, err := mcp.Logout("remote", srv, *store, nil); !gone || err != nil {
		t.Fatalf("logout: %v %v", gone, err)
	}
	if files, _ := filepath.Glob(filepath.Join(store.Dir, "*.json")); len(files) != 0 {
		t.Fatalf("after logout: %q", files)
	}
}

func TestOAuthHostile(t *testing.T) {
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request went to another origin: %s", r.URL)
	}))
	defer elsewhere.Close()
	cases := []struct {
		name  string
		setup func(as *authServer, ps *protectedServer)
		want  string
	}{
		{"authorization server over plain http elsewhere", func(as *authServer, ps *protectedServer) {
			ps.prm = func(md map[string]any) { md["authorization_servers"] = []string{"http://auth.example.com"} }
		}, ""},
		{"metadata for another resource", func(as *authServer, ps *protectedServer) {
			ps.prm = func(md map[string]any) { md["resource"] = "https://victim.example.com/mcp" }
		}, ""},
		{"token endpoint over plain http elsewhere", func(as *authServer, ps *protectedServer) {
			as.metadata = func(md map[string]any) { md["token_endpoint"] = "http://auth.example.com/token" }
		}, "token_endpoint"},
		{"no PKCE", func(as *authServer, ps *protectedServer) {
			as.metadata = func(md map[string]any) { delete(md, "code_challenge_methods_supported") }
		}, "PKCE"},
		{"metadata redirected to another origin", func(as *authServer, ps *protectedServer) {
			as.metadata = nil
			ps.prm = nil
			ps.Config.Handler = redirectPRM(ps.Config.Handler, elsewhere.URL)
		}, ""},
		{"huge token answer", func(as *authServer, ps *protectedServer) {
			as.hugeToken = 200 << 20
		}, "token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			as := newAuthServer(t)
			ps := newProtectedServer(t, as)
			c.setup(as, ps)
			store := &mcp.TokenStore{Dir: t.TempDir()}
			var b browser
			start := time.Now()
			_, err := mcp.Login(context.Background(), "remote", mcp.Server{URL: ps.URL + "/mcp"}, mcp.LoginOptions{Store: *store, Open: b.open, Timeout: 20 * time.Second})
			if err == nil || !errors.Is(err, mcp.ErrLogin) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("login: %v, want an ErrLogin naming %q", err, c.want)
			}
			if time.Since(start) > 15*time.Second {
				t.Fatalf("took %v", time.Since(start))
			}
			if files, _ := filepath.Glob(filepath.Join(store.Dir, "*")); len(files) != 0 {
				t.Fatalf("kept %q", files)
			}
			t.Logf("%v", err)
		})
	}
}

// redirectPRM sends the protected resource metadata's requests to
// another origin.
func redirectPRM(h http.Handler, to string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			http.Redirect(w, r, to+r.URL.Path, http.StatusFound)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// A server that asks for a scope the kept token was not granted (403
// insufficient_scope, step-up) is not refreshed in vain: the connection
// says a login is needed and which scope; the next login asks for it too.
func TestOAuthStepUp(t *testing.T) {
	as := newAuthServer(t)
	ps := newProtectedServer(t, as)
	store := &mcp.TokenStore{Dir: t.TempDir()}
	srv := mcp.Server{URL: ps.URL + "/mcp"}
	var b browser
	if _, err := mcp.Login(context.Background(), "remote", srv, mcp.LoginOptions{Store: *store, Open: b.open, Timeout: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	ps.mu.Lock()
	ps.need = "admin"
	ps.mu.Unlock()
	st := connectRemote(t, srv.URL, store)
	if st.State != mcp.Failed || !strings.Contains(st.Error, `asks for scope "tools admin"`) || !strings.Contains(st.Error, "harness mcp login remote") {
		t.Fatalf("short of a scope: %s %q", st.State, st.Error)
	}
	as.mu.Lock()
	refreshes := as.refreshes
	as.mu.Unlock()
	if refreshes != 0 {
		t.Fatalf("%d refreshes for a missing scope", refreshes)
	}
	res, err := mcp.Login(context.Background(), "remote", srv, mcp.LoginOptions{Store: *store, Open: b.open, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Scopes, "admin") {
		t.Fatalf("the second login asked for %q", res.Scopes)
	}
	if st := connectRemote(t, srv.URL, store); st.State != mcp.Connected {
		t.Fatalf("after the second login: %s %q", st.State, st.Error)
	}
}
