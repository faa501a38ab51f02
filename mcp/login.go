package mcp

import (
	"context"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/seed-7cc7a084/harness/facts"
)

// LoginOptions configure Login.
type LoginOptions struct {
	// Store is where the credential is kept.
	Store TokenStore
	// Open shows the person the authorization URL (prints it, starts a
	// browser); the person's browser then comes back to the local
	// callback. Required.
	Open func(authURL string) error
	// Environ is what ${VAR} in the settings is read from; nil is
	// os.Environ().
	Environ []string
	// HTTPClient reaches the server and its authorization server; nil is
	// http.DefaultTransport's.
	HTTPClient *http.Client
	// Version names the harness to the authorization server and the
	// server.
	Version string
	// Timeout bounds the whole login, the person's time in the browser
	// included; 0 is 5 minutes.
	Timeout time.Duration
}

// LoginResult is what Login did.
type LoginResult struct {
	// Server is the server's URL (without its query).
	Server string
	// Scopes are the scopes asked for.
	Scopes []string
	// Refreshable says a refresh token was given: the login lasts past
	// the access token's expiry.
	Refreshable bool
	// Expiry is when the access token expires (zero: not said).
	Expiry time.Time
	// Tools is how many tools the server listed once logged in.
	Tools int
}

// Login logs in to the remote server srv (named name in the settings) as
// the MCP authorization spec (2025-11-25) says, and keeps the tokens in
// the store: the server's 401 names its protected resource metadata
// (RFC 9728), which names its authorization server, whose metadata (RFC
// 8414) must offer PKCE; harness registers itself there (RFC 7591) unless
// the settings name a client; the person authorizes in their browser
// (authorization code with PKCE S256, the resource indicator of RFC 8707,
// the issuer checked as RFC 9207 says); the browser comes back to a
// callback on 127.0.0.1 that lives for this login only; the code is
// exchanged for tokens; the session is then initialized with them.
//
// Discovery, registration, PKCE and the code exchange are the go-sdk's
// auth package (AuthorizationCodeHandler), which checks every endpoint is
// https (or loopback) and the metadata's resource is the server's; harness
// adds the callback, the store, refusing redirects to another origin, and
// its own bounded refresh (see storedAuth).
func Login(ctx context.Context, name string, srv Server, opts LoginOptions) (*LoginResult, error) {
	if err := srv.Validate(name); err != nil {
		return nil, err
	}
	if opts.Open == nil {
		return nil, fmt.Errorf("%w: no way to show the person the authorization URL", ErrLogin)
	}
	env := opts.Environ
	if env == nil {
		env = os.Environ()
	}
	ex, err := srv.expanded(name, lookupIn(env))
	if err != nil {
		return nil, err
	}
	if ex.Transport() != facts.MCPHTTP {
		return nil, fmt.Errorf("%w: %q is a local (stdio) server: only a remote server is logged in to", ErrLogin, name)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	oa := OAuth{}
	if ex.OAuth != nil {
		oa = *ex.OAuth
	}

	// The callback: 127.0.0.1 only, this login only.
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(oa.CallbackPort)))
	if err != nil {
		return nil, fmt.Errorf("%w: the local callback: %v", ErrLogin, err)
	}
	redirect := "http://" + ln.Addr().String() + "/callback"
	cb := &callback{got: make(chan url.Values, 1)}
	hs := &http.Server{Handler: cb, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()

	// The settings' headers go to the server only, never to its
	// authorization server.
	hc := oauthClient(opts.HTTPClient)
	mc := &http.Client{Transport: headers{ex.Headers, hc.Transport}}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	var (
		mu       sync.Mutex
		resource string
		cred     *Credential
		asks     int
	)
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:         redirect,
		Client:              hc,
		RequestRefreshToken: true,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			u, err := url.Parse(args.URL)
			if err != nil {
				return nil, fmt.Errorf("%w: the authorization URL: %v", ErrLogin, err)
			}
			if u.Scheme != "https" && !(u.Scheme == "http" && loopbackHost(u.Hostname())) {
				return nil, fmt.Errorf("%w: the authorization endpoint %s is neither https nor on this machine", ErrLogin, u.Redacted())
			}
			mu.Lock()
			resource = u.Query().Get("resource")
			asks++
			again, gotToken := asks > 1, cred != nil
			mu.Unlock()
			switch {
			case again && !gotToken:
				// The SDK tries once more after a failed exchange: the
				// person is not asked twice for one login.
				return nil, fmt.Errorf("%w: the authorization server did not give a token for the code (its token endpoint refused it, or its answer could not be read)", ErrLogin)
			case asks > 2:
				return nil, fmt.Errorf("%w: the server asked for authorization again after two logins", ErrLogin)
			}
			if err := opts.Open(args.URL); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrLogin, err)
			}
			var q url.Values
			select {
			case q = <-cb.got:
			case <-ctx.Done():
				return nil, fmt.Errorf("%w: no answer from the browser: %v", ErrLogin, ctx.Err())
			}
			if e := q.Get("error"); e != "" {
				return nil, fmt.Errorf("%w: the authorization server said %s: %s", ErrLogin, said(e, 80), said(q.Get("error_description"), 200))
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			mu.Lock()
			defer mu.Unlock()
			cred = &Credential{Server: endpointOf(ex), Resource: resource, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
				AuthStyle: c.Endpoint.AuthStyle, TokenURL: c.Endpoint.TokenURL, Scopes: slices.Clone(c.Scopes),
				AccessToken: tok.AccessToken, TokenType: tok.TokenType, RefreshToken: tok.RefreshToken, Expiry: tok.Expiry}
			return oauth2.StaticTokenSource(tok), nil
		},
	}
	// The scopes: the settings' instead of the server's, and those the
	// server said the last login's token lacked.
	var need []string
	if prev, err := opts.Store.Load(ex.URL); err == nil && prev != nil {
		need = prev.NeedScopes
	}
	if len(oa.Scopes) > 0 || len(need) > 0 {
		cfg.ScopeFilter = func(discovered []string) []string {
			if len(oa.Scopes) > 0 {
				discovered = oa.Scopes
			}
			return union(discovered, need)
		}
	}
	if oa.ClientID != "" {
		pre := &oauthex.ClientCredentials{ClientID: oa.ClientID}
		if oa.ClientSecret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: oa.ClientSecret}
		}
		cfg.PreregisteredClient = pre
	} else {
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: "harness", SoftwareID: "harness", SoftwareVersion: version,
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
			TokenEndpointAuthMethod: "none",
		}}
	}
	handler, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLogin, err)
	}
	// The session is what asks: its first request is refused (401) and
	// the handler logs in, then the request goes again with the token.
	transport := &sdk.StreamableClientTransport{Endpoint: ex.URL, HTTPClient: mc, OAuthHandler: handler, MaxRetries: 1}
	cl := sdk.NewClient(&sdk.Implementation{Name: "harness", Version: version}, nil)
	session, err := cl.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrLogin, endpointOf(ex), err)
	}
	// Its tools are listed with the token too: a server that asks for
	// more scopes for that (403 insufficient_scope) is logged in to again,
	// asking for them, now, while the person is at the browser.
	tools := 0
	for _, err := range session.Tools(ctx, nil) {
		if err != nil {
			_ = session.Close()
			return nil, fmt.Errorf("%w: %s: list its tools: %v", ErrLogin, endpointOf(ex), err)
		}
		tools++
	}
	_ = session.Close()
	mu.Lock()
	got := cred
	mu.Unlock()
	if got == nil {
		return nil, fmt.Errorf("%w: %s answered without asking for authorization: there is nothing to log in to", ErrLogin, endpointOf(ex))
	}
	if err := opts.Store.Save(ex.URL, got); err != nil {
		return nil, err
	}
	return &LoginResult{Server: got.Server, Scopes: got.Scopes, Refreshable: got.RefreshToken != "", Expiry: got.Expiry, Tools: tools}, nil
}

// Logout forgets the kept credential of the server srv; it reports
// whether there was one.
func Logout(name string, srv Server, store TokenStore, environ []string) (bool, error) {
	if environ == nil {
		environ = os.Environ()
	}
	ex, err := srv.expanded(name, lookupIn(environ))
	if err != nil {
		return false, err
	}
	c, err := store.Load(ex.URL)
	if err != nil || c == nil {
		return false, err
	}
	return true, store.Delete(ex.URL)
}

// callback is the local page the browser comes back to: it passes an
// answer on /callback to the login waiting for one (another is dropped)
// and says the person may close the page.
type callback struct {
	got chan url.Values
}

func (c *callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	took := false
	select {
	case c.got <- q:
		took = true
	default:
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	msg := "harness has the answer: you may close this page."
	switch {
	case !took:
		msg = "this login was already answered."
	case q.Get("error") != "":
		msg = "the authorization server said: " + q.Get("error")
	}
	fmt.Fprintf(w, "<!doctype html><title>harness mcp login</title><p>%s</p>\n", html.EscapeString(msg))
}

// oauthClient is the HTTP client of a login and of a connection's
// refreshes: bounded bodies (as every request to a remote server), no
// redirect to another origin.
func oauthClient(base *http.Client) *http.Client {
	rt := http.DefaultTransport
	if base != nil && base.Transport != nil {
		rt = base.Transport
	}
	return &http.Client{Transport: headers{nil, rt}, CheckRedirect: sameOrigin, Timeout: 60 * time.Second}
}

// loopbackHost reports whether host is this machine.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
