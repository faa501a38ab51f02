package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// TokenStore keeps the tokens of remote servers a person logged in to
// (harness mcp login): one file per server URL, mode 0600, in a directory
// of mode 0700 in the person's configuration ($XDG_CONFIG_HOME/harness/
// mcp-tokens), never in a workspace. The sandbox hides that directory from
// every command and local server, and no token is ever put in a fact.
//
// A token is kept for the server's URL, not its name: a project that
// names a server of its own as yours gets no token of yours.
type TokenStore struct {
	// Dir is the directory; absolute.
	Dir string
}

// Credential is what is kept of one server's login: the client the
// authorization server knows harness by, where tokens are refreshed, and
// the tokens.
type Credential struct {
	// Server is the server's URL (without its query), for people.
	Server string `json:"server"`
	// Resource is the resource indicator (RFC 8707) the token was asked
	// for, sent again on each refresh.
	Resource     string           `json:"resource,omitempty"`
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
	TokenURL     string           `json:"token_url"`
	Scopes       []string         `json:"scopes,omitempty"`
	AccessToken  string           `json:"access_token"`
	TokenType    string           `json:"token_type,omitempty"`
	RefreshToken string           `json:"refresh_token,omitempty"`
	Expiry       time.Time        `json:"expiry,omitzero"`
	// NeedScopes are scopes the server said a request needs that the
	// token was not granted (403 insufficient_scope): the next login asks
	// for them too.
	NeedScopes []string `json:"need_scopes,omitempty"`
}

// token is the credential's token, for an HTTP request.
func (c *Credential) token() *oauth2.Token {
	typ := c.TokenType
	if typ == "" {
		typ = "Bearer"
	}
	return &oauth2.Token{AccessToken: c.AccessToken, TokenType: typ, RefreshToken: c.RefreshToken, Expiry: c.Expiry}
}

// file is the path of the credential of the server at serverURL.
func (s TokenStore) file(serverURL string) (string, error) {
	if s.Dir == "" || !filepath.IsAbs(s.Dir) {
		return "", fmt.Errorf("%w: %q is not an absolute directory", ErrTokenStore, s.Dir)
	}
	sum := sha256.Sum256([]byte(serverURL))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:16])+".json"), nil
}

// Load returns the credential kept for the server at serverURL; nil and
// no error when there is none.
func (s TokenStore) Load(serverURL string) (*Credential, error) {
	path, err := s.file(serverURL)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTokenStore, err)
	}
	var c Credential
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrTokenStore, path, err)
	}
	return &c, nil
}

// Save keeps c as the credential of the server at serverURL, replacing
// the file whole (written aside, mode 0600, then renamed).
func (s TokenStore) Save(serverURL string, c *Credential) error {
	path, err := s.file(serverURL)
	if err != nil {
		return err
	}
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return s.write(path, data)
}

// write replaces the file at path, in the store's directory, with data:
// written aside, mode 0600, then renamed.
func (s TokenStore) write(path string, data []byte) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("%w: %v", ErrTokenStore, err)
	}
	if err := os.Chmod(s.Dir, 0o700); err != nil {
		return fmt.Errorf("%w: %v", ErrTokenStore, err)
	}
	tmp, err := os.CreateTemp(s.Dir, ".token-*")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrTokenStore, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("%w: %v", ErrTokenStore, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("%w: %v", ErrTokenStore, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%w: %v", ErrTokenStore, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%w: %v", ErrTokenStore, err)
	}
	return nil
}

// Delete forgets the credential of the server at serverURL (logout).
func (s TokenStore) Delete(serverURL string) error {
	path, err := s.file(serverURL)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %v", ErrTokenStore, err)
	}
	return nil
}

// storedAuth is the authorization of a connection to a remote server from
// the token store (an auth.OAuthHandler of the go-sdk's streamable
// transport): its kept token, refreshed when it expires or the server
// refuses it. It never starts a login: a server that still refuses, or
// one with no token kept, is ErrLoginNeeded, naming the command that
// logs in. Connections run unattended (run, serve, workers); a browser is
// opened only by harness mcp login, on a person's word.
type storedAuth struct {
	name   string
	url    string // the server's URL, the store's key
	store  TokenStore
	client *http.Client

	// mu guards cred and refreshed.
	mu   sync.Mutex
	cred *Credential
	// refreshed says the token was refreshed after the server refused
	// it: a second refusal is not refreshed again.
	refreshed bool
}

func newStoredAuth(name, serverURL string, store TokenStore, client *http.Client) (*storedAuth, error) {
	cred, err := store.Load(serverURL)
	if err != nil {
		return nil, err
	}
	return &storedAuth{name: name, url: serverURL, store: store, client: client, cred: cred}, nil
}

// TokenSource is the kept token, refreshed when it has expired; nil when
// none is kept (the request then goes without, and a server that needs
// one says so).
func (a *storedAuth) TokenSource(context.Context) (oauth2.TokenSource, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cred == nil {
		return nil, nil
	}
	return a, nil
}

// Token implements oauth2.TokenSource.
func (a *storedAuth) Token() (*oauth2.Token, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cred == nil {
		return nil, a.loginNeeded("no token is kept for it")
	}
	if a.cred.Expiry.IsZero() || time.Until(a.cred.Expiry) > 30*time.Second {
		return a.cred.token(), nil
	}
	if err := a.refreshLocked(context.Background()); err != nil {
		return nil, err
	}
	return a.cred.token(), nil
}

// Authorize is called when the server refused a request (401, 403): the
// token is refreshed once; past that, or without a refresh token, a
// person must log in.
func (a *storedAuth) Authorize(ctx context.Context, _ *http.Request, res *http.Response) error {
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	a.mu.Lock()
	defer a.mu.Unlock()
	if res.StatusCode == http.StatusForbidden {
		// A token the server knows, short of a scope: a refresh gets the
		// same scopes, so a person must log in again, asking for more.
		chs, _ := oauthex.ParseWWWAuthenticate(res.Header.Values("WWW-Authenticate"))
		for _, c := range chs {
			if c.Scheme != "bearer" || c.Params["error"] != "insufficient_scope" {
				continue
			}
			need := strings.Fields(c.Params["scope"])
			if a.cred != nil && len(need) > 0 {
				next := *a.cred
				next.NeedScopes = union(next.NeedScopes, need)
				if err := a.store.Save(a.url, &next); err != nil {
					return err
				}
				a.cred = &next
			}
			return a.loginNeeded(fmt.Sprintf("it asks for scope %q, which the kept token was not granted (a new login asks for it)", said(strings.Join(need, " "), 200)))
		}
		return nil // another refusal: the request goes again, and fails as it fails
	}
	switch {
	case a.cred == nil:
		return a.loginNeeded("no token is kept for it")
	case a.refreshed || a.cred.RefreshToken == "":
		return a.loginNeeded(fmt.Sprintf("it refused the kept token (HTTP %d)", res.StatusCode))
	}
	a.refreshed = true
	return a.refreshLocked(ctx)
}

func (a *storedAuth) loginNeeded(why string) error {
	return fmt.Errorf("%w: %s; log in with: harness mcp login %s", ErrLoginNeeded, why, a.name)
}

// union is a with the elements of b it lacks, in order.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// MaxTokenResponse bounds the token endpoint's answer (and every other
// OAuth endpoint's: see the go-sdk's and oauth2's own bounds of 1 MiB).
const MaxTokenResponse = 1 << 20

// refreshLocked gets a new access token with the refresh token (RFC 6749
// §6), naming the resource it is for (RFC 8707, as the MCP spec asks), and
// keeps it. a.mu is held.
func (a *storedAuth) refreshLocked(ctx context.Context) error {
	c := a.cred
	if c.RefreshToken == "" {
		return a.loginNeeded("its token expired and no refresh token is kept")
	}
	tok, err := refreshToken(ctx, a.client, c)
	if err != nil {
		return a.loginNeeded(fmt.Sprintf("its token could not be refreshed: %v", err))
	}
	next := *c
	next.AccessToken, next.Expiry = tok.AccessToken, tok.Expiry
	if tok.TokenType != "" {
		next.TokenType = tok.TokenType
	}
	if tok.RefreshToken != "" {
		next.RefreshToken = tok.RefreshToken
	}
	if err := a.store.Save(a.url, &next); err != nil {
		return err
	}
	a.cred = &next
	return nil
}

// tokenAnswer is a token endpoint's answer (RFC 6749 §5.1, §5.2).
type tokenAnswer struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int64  `json:"expires_in"`
	Error        string `json:"error"`
	Description  string `json:"error_description"`
}

// refreshToken asks c's token endpoint for a new token.
func refreshToken(ctx context.Context, client *http.Client, c *Credential) (*oauth2.Token, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {c.RefreshToken}}
	if c.Resource != "" {
		form.Set("resource", c.Resource)
	}
	if len(c.Scopes) > 0 {
		form.Set("scope", strings.Join(c.Scopes, " "))
	}
	basic := c.ClientSecret != "" && c.AuthStyle != oauth2.AuthStyleInParams
	if !basic {
		form.Set("client_id", c.ClientID)
		if c.ClientSecret != "" {
			form.Set("client_secret", c.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic {
		req.SetBasicAuth(url.QueryEscape(c.ClientID), url.QueryEscape(c.ClientSecret))
	}
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, MaxTokenResponse+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxTokenResponse {
		return nil, fmt.Errorf("the token endpoint's answer is over %d bytes", MaxTokenResponse)
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "application/json" {
		return nil, fmt.Errorf("the token endpoint answered HTTP %d with %q, not JSON", res.StatusCode, mt)
	}
	var ans tokenAnswer
	if err := json.Unmarshal(body, &ans); err != nil {
		return nil, fmt.Errorf("the token endpoint's answer: %v", err)
	}
	if res.StatusCode != http.StatusOK || ans.Error != "" {
		return nil, fmt.Errorf("the token endpoint refused (HTTP %d): %s %s", res.StatusCode, said(ans.Error, 80), said(ans.Description, 200))
	}
	if ans.AccessToken == "" {
		return nil, errors.New("the token endpoint's answer holds no access_token")
	}
	tok := &oauth2.Token{AccessToken: ans.AccessToken, TokenType: ans.TokenType, RefreshToken: ans.RefreshToken}
	if ans.ExpiresIn > 0 {
		tok.Expiry = time.Now().Add(time.Duration(ans.ExpiresIn) * time.Second)
	}
	return tok, nil
}

// said is what an authorization server said, for an error message: on
// one line, without control characters (a terminal's escapes), cut to n
// bytes.
func said(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	return oneLine(strings.ToValidUTF8(s, "?"), n)
}

// sameOrigin refuses a redirect to another origin (scheme, host, port)
// than the request's: an OAuth endpoint or a metadata document that sends
// harness elsewhere is not followed.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("too many redirects")
	}
	prev := via[len(via)-1].URL
	if req.URL.Scheme != prev.Scheme || req.URL.Host != prev.Host {
		return fmt.Errorf("%s redirected to another origin (%s://%s): not followed", prev.Redacted(), req.URL.Scheme, req.URL.Host)
	}
	return nil
}
