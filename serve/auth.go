package serve

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/seed-7cc7a084/harness/stock"
)

// token is one token the server accepts, and the person it names.
type token struct {
	name   string
	secret string
}

// Identity is who a request acts as: the person its token names.
type Identity struct {
	// Name is the name the token names: what an approval records.
	Name string
	// secret is the token itself; cookie says it came in a cookie (a
	// browser's: posts must carry the CSRF token).
	secret string
	cookie bool
}

type identityKey struct{}

// IdentityOf is who the request acts as, once the server let it in.
func IdentityOf(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// Guard is who may use a server and from where: the tokens it accepts,
// each naming a person, the key of its pages' CSRF tokens, and the cookie
// a browser keeps its token in. The page and the API of a Server keep to
// one; another front end's HTTP handler (harness's MCP server over HTTP)
// is wrapped in one (Bearer), so that the same tokens let the same people
// in and a post from another site is refused alike.
type Guard struct {
	tokens  []token
	key     [32]byte // the CSRF tokens' key
	cookie  string
	maxBody int64 // bounds a form read for its CSRF field
}

// NewGuard is the guard of a server that accepts tokens (at least one,
// each naming a person with at least stock.MinTokenLen characters); a
// form's body is read up to maxBody bytes for its CSRF field.
func NewGuard(tokens []stock.ServeToken, maxBody int64) (*Guard, error) {
	if len(tokens) == 0 {
		return nil, ErrNoToken
	}
	g := &Guard{maxBody: maxBody}
	names := sha256.New()
	for _, t := range tokens {
		if len(t.Token) < stock.MinTokenLen || t.Name == "" {
			return nil, fmt.Errorf("serve: token of %q: want a name and at least %d characters", t.Name, stock.MinTokenLen)
		}
		g.tokens = append(g.tokens, token{name: t.Name, secret: t.Token})
		names.Write([]byte(t.Token + "\x00"))
	}
	// The cookie's name is the servers' own: two servers on one host
	// (cookies ignore ports) do not overwrite each other's.
	g.cookie = "harness-" + hex.EncodeToString(names.Sum(nil))[:12]
	if _, err := rand.Read(g.key[:]); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return g, nil
}

// lookup returns the identity of a token, comparing in constant time
// against every token.
func (g *Guard) lookup(secret string) (Identity, bool) {
	var found Identity
	ok := 0
	for _, t := range g.tokens {
		if subtle.ConstantTimeCompare([]byte(t.secret), []byte(secret)) == 1 {
			found, ok = Identity{Name: t.name, secret: t.secret}, 1
		}
	}
	return found, ok == 1
}

// csrf is the CSRF token of a page shown to the holder of secret.
func (g *Guard) csrf(secret string) string {
	m := hmac.New(sha256.New, g.key[:])
	m.Write([]byte("csrf\x00" + secret))
	return hex.EncodeToString(m.Sum(nil))[:32]
}

// authenticate lets a request in if it carries a token: a bearer token,
// the cookie a browser got, or ?token= on a GET (which sets the cookie
// and sends the browser on without the token in its address). A post
// with the cookie must carry the page's CSRF token and come from the
// server's own pages. Nothing else gets past it.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api := strings.HasPrefix(r.URL.Path, "/api/")
		if q := r.URL.Query().Get("token"); q != "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			id, ok := s.lookup(q)
			if !ok {
				s.unauthorized(w, r, api, "the token in the address is not one this server accepts")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: id.secret, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			rest := r.URL.Query()
			rest.Del("token")
			// The same page without the token, named relative to this
			// one ("./NAME?REST"): it stays under the prefix the page is
			// mounted at (see rooted).
			p := r.URL.EscapedPath()
			loc := "./" + p[strings.LastIndexByte(p, '/')+1:]
			if len(rest) > 0 {
				loc += "?" + rest.Encode()
			}
			w.Header().Set("Location", loc)
			w.WriteHeader(http.StatusSeeOther)
			return
		}
		var id Identity
		var ok bool
		switch auth := r.Header.Get("Authorization"); {
		case auth != "":
			secret, found := strings.CutPrefix(auth, "Bearer ")
			if !found {
				s.unauthorized(w, r, api, "the Authorization header must be Bearer TOKEN")
				return
			}
			id, ok = s.lookup(strings.TrimSpace(secret))
		default:
			c, err := r.Cookie(s.cookie)
			if err != nil {
				s.unauthorized(w, r, api, "no token: open the address the server printed, with its token")
				return
			}
			id, ok = s.lookup(c.Value)
			id.cookie = true
		}
		if !ok {
			s.unauthorized(w, r, api, "the token is not one this server accepts")
			return
		}
		s.let(w, r, next, id, api)
	})
}

// let lets a request that carries the token of id through to next, as
// id, unless it is a post that may not be the person's own doing
// (crossSite): that is refused with 403.
func (g *Guard) let(w http.ResponseWriter, r *http.Request, next http.Handler, id Identity, api bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if why := g.crossSite(w, r, id); why != "" {
			writeError(w, r, api, http.StatusForbidden, "forbidden", why)
			return
		}
	}
	next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), identityKey{}, id)))
}

// crossSite says why a post may not be the person's own doing, or "": a
// browser that says the post comes from another site, or one that
// authenticates with its cookie but does not carry the page's CSRF token.
func (g *Guard) crossSite(w http.ResponseWriter, r *http.Request, id Identity) string {
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return "a post from another site is refused"
	}
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		if u, err := url.Parse(o); err != nil || u.Host != r.Host {
			return "a post from another origin is refused"
		}
	}
	if !id.cookie {
		return "" // a bearer token: no browser adds it by itself
	}
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		// A form's field. The body is bounded before it is parsed.
		r.Body = http.MaxBytesReader(w, r.Body, g.maxBody)
		got = r.PostFormValue("csrf")
	}
	if got == "" {
		return "the post carries no CSRF token (reload the page)"
	}
	if !hmac.Equal([]byte(got), []byte(g.csrf(id.secret))) {
		return "the post's CSRF token is not this page's (reload the page)"
	}
	return ""
}

// Bearer wraps next, a handler for programs, in the guard: a request is
// let in only with a token, as "Authorization: Bearer TOKEN" or, for a
// client that is given only an address, as ?token=TOKEN in it (never a
// cookie: no browser adds either by itself); and, as on the page, a
// request other than a GET that a browser says comes from another site
// or origin is refused. A refusal is a JSON error: 401 with
// WWW-Authenticate, or 403.
func (g *Guard) Bearer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, given := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch {
		case r.Header.Get("Authorization") != "" && !given:
			g.refuse(w, r, "the Authorization header must be Bearer TOKEN")
			return
		case !given:
			secret = r.URL.Query().Get("token")
		}
		if secret == "" {
			g.refuse(w, r, "no token: send it as Authorization: Bearer TOKEN (or ?token=TOKEN in the address)")
			return
		}
		id, ok := g.lookup(strings.TrimSpace(secret))
		if !ok {
			g.refuse(w, r, "the token is not one this server accepts")
			return
		}
		g.let(w, r, next, id, true)
	})
}

// refuse refuses a program's request that carries no token the guard
// knows: 401, saying how to send one.
func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, why string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="harness"`)
	writeError(w, r, true, http.StatusUnauthorized, "unauthorized", why)
}

// unauthorized refuses a request that carries no token the server knows.
func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request, api bool, why string) {
	if api {
		s.refuse(w, r, why)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	s.render(w, r, "login", map[string]any{"Why": why})
}
