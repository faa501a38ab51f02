package mcp

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
)

// Server is one MCP server of the settings' "mcpServers", in the shape of
// Claude Code's .mcp.json: a local server is a command (stdio), a remote
// one a URL (streamable HTTP).
//
//	"mcpServers": {
//	  "fs":     {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
//	  "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
//	             "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}
//	}
//
// Command, Args, Env values, URL and Headers values may name the
// harness's environment variables as ${VAR} or ${VAR:-default}. Beside the
// fields of that shape, a server may say Trusted, Timeout, Network and
// Checks, which are harness's own.
type Server struct {
	// Type is "stdio" or "http"; "" is stdio for a command and http for a
	// URL. ("sse", the older HTTP transport, is not supported.)
	Type string `json:"type,omitempty"`
	// Command and Args start a local server. It runs in the sandbox the
	// harness's commands run in (package sandbox), with the allow-listed
	// environment and Env, in the workspace, and the workspace observer
	// watches what its calls change.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// URL is a remote server's streamable HTTP endpoint; Headers are sent
	// with every request (a token, say). Nobody can look at what a remote
	// server does: its calls' effects are reported, never observed.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Trusted lets the server's readOnlyHint lower a tool to the read
	// capability, run without asking a person. An untrusted server's hints
	// are ignored: every call of its tools asks (unless a pattern or the
	// approval mode says otherwise).
	Trusted bool `json:"trusted,omitempty"`
	// Timeout bounds each call (a Go duration: "30s", "2m"); the default
	// is DefaultTimeout.
	Timeout string `json:"timeout,omitempty"`
	// Network lets a local server use the network (the sandbox has none
	// but loopback otherwise).
	Network bool `json:"network,omitempty"`
	// Checks declare a check for the calls of a tool, by the tool's name
	// on the server. "file_equals" declares that the file the call's
	// "path" argument names holds the call's "content" argument exactly
	// (a write_file tool's arguments).
	Checks map[string]string `json:"checks,omitempty"`
	// Sampling lets the server ask for a turn of the thread's model
	// (sampling/createMessage) during a call of one of its tools: the
	// turn runs with no tools, bounded (SamplingMaxTokens, MaxSampleBytes,
	// SamplingPerCall), budgeted and recorded as model.sampled; the
	// thread's conversation is never included. Off, a request is refused
	// saying how a person allows it. A server's settings are used only
	// from the person's own file or a project file they trusted (an
	// untrusted project's server, or its change to a server the person
	// declared, is left out: see stock.Widens), so an untrusted project
	// cannot turn it on.
	Sampling bool `json:"sampling,omitempty"`
	// SamplingMaxTokens caps the answer of one sampling turn, in tokens
	// (a server that asks for more gets this many); 0 is
	// DefaultSamplingMaxTokens, at most MaxSamplingMaxTokens.
	SamplingMaxTokens int64 `json:"sampling_max_tokens,omitempty"`
	// SamplingPerCall bounds the sampling turns of one call; 0 is
	// DefaultSamplingPerCall, at most MaxSamplingPerCall.
	SamplingPerCall int `json:"sampling_per_call,omitempty"`
	// OAuth is how a remote server that asks for authorization (the MCP
	// authorization spec) is logged in to with harness mcp login: a
	// client registered beforehand, scopes other than the ones the
	// server names. Without it a client is registered dynamically where
	// the authorization server offers that.
	OAuth *OAuth `json:"oauth,omitempty"`
}

// OAuth is a remote server's settings for logging in (see Login).
type OAuth struct {
	// ClientID and ClientSecret name a client registered with the
	// server's authorization server beforehand (ClientSecret may be a
	// ${VAR}); without ClientID the client registers itself.
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	// Scopes replace the scopes the server asks for.
	Scopes []string `json:"scopes,omitempty"`
	// CallbackPort is the port of the local callback the browser is sent
	// back to (http://127.0.0.1:PORT/callback); 0 is any free port (a
	// client registered beforehand usually needs a fixed one).
	CallbackPort int `json:"callback_port,omitempty"`
}

// Servers are the settings' "mcpServers": servers by name. A name is made
// of letters, digits, '-' and '_': the model calls a server's tools
// mcp__<name>__<tool>.
type Servers map[string]Server

// The checks a Server's Checks may name.
const (
	// CheckFileEquals: the "path" argument's file holds the "content"
	// argument (see action.FileEquals).
	CheckFileEquals = "file_equals"
)

// DefaultTimeout bounds a call to a server's tool when the server's
// settings give no Timeout.
const DefaultTimeout = 60 * time.Second

// ErrConfig: a server's settings cannot work; the error names the server
// and the field.
var ErrConfig = errors.New("mcp server settings")

// Names returns the servers' names, sorted.
func (s Servers) Names() []string {
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Validate checks every server (see Server.Validate), in name order, and
// reports every one that cannot work.
func (s Servers) Validate() error {
	var errs []error
	for _, name := range s.Names() {
		if err := s[name].Validate(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Validate checks the settings of the server named name without starting
// or reaching it: a name that can be part of a tool name, one known
// transport with what it needs and nothing of the other's, a timeout that
// parses, checks that exist. Variables (${VAR}) are not expanded here.
func (s Server) Validate(name string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %q: %s", ErrConfig, name, fmt.Sprintf(format, args...))
	}
	if err := validName(name); err != nil {
		return bad("%v", err)
	}
	switch s.Transport() {
	case facts.MCPStdio:
		switch {
		case strings.TrimSpace(s.Command) == "":
			return bad(`a stdio server needs a "command"`)
		case s.URL != "" || len(s.Headers) > 0 || s.OAuth != nil:
			return bad(`a stdio server takes "command", "args" and "env", not "url", "headers" or "oauth"`)
		}
		for k := range s.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return bad("env: %q is not a variable name", k)
			}
		}
	case facts.MCPHTTP:
		switch {
		case s.URL == "":
			return bad(`an http server needs a "url"`)
		case s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0:
			return bad(`an http server takes "url" and "headers", not "command", "args" or "env"`)
		case s.Network:
			return bad(`"network" is for a stdio server (a remote server is reached over the network anyway)`)
		case s.OAuth != nil && s.OAuth.ClientSecret != "" && s.OAuth.ClientID == "":
			return bad(`oauth: a "client_secret" needs its "client_id"`)
		case s.OAuth != nil && (s.OAuth.CallbackPort < 0 || s.OAuth.CallbackPort > 65535):
			return bad("oauth: callback_port %d is not a port", s.OAuth.CallbackPort)
		}
		if !strings.Contains(s.URL, "${") {
			if err := checkURL(s.URL); err != nil {
				return bad("url: %v", err)
			}
		}
	case "sse":
		return bad(`type "sse" (the older HTTP+SSE transport) is not supported; use the server's streamable HTTP endpoint with type "http"`)
	default:
		return bad(`type %q: want "stdio" or "http" (or neither: a "command" is stdio, a "url" http)`, s.Type)
	}
	if s.Timeout != "" {
		d, err := time.ParseDuration(s.Timeout)
		if err != nil || d <= 0 {
			return bad("timeout %q: want a duration such as \"30s\" or \"2m\"", s.Timeout)
		}
	}
	if s.SamplingMaxTokens < 0 || s.SamplingMaxTokens > MaxSamplingMaxTokens {
		return bad("sampling_max_tokens %d: want 1 to %d (0: %d)", s.SamplingMaxTokens, MaxSamplingMaxTokens, DefaultSamplingMaxTokens)
	}
	if s.SamplingPerCall < 0 || s.SamplingPerCall > MaxSamplingPerCall {
		return bad("sampling_per_call %d: want 1 to %d (0: %d)", s.SamplingPerCall, MaxSamplingPerCall, DefaultSamplingPerCall)
	}
	for tool, check := range s.Checks {
		if check != CheckFileEquals {
			return bad("checks: tool %q: check %q is not one of [%s]", tool, check, CheckFileEquals)
		}
	}
	return nil
}

// Transport is the server's transport: facts.MCPStdio or facts.MCPHTTP,
// or the Type as given when it is neither.
func (s Server) Transport() string {
	switch s.Type {
	case "":
		if s.Command == "" && s.URL != "" {
			return facts.MCPHTTP
		}
		return facts.MCPStdio
	case "streamable-http", "streamableHttp":
		return facts.MCPHTTP
	}
	return s.Type
}

// CallTimeout is the server's Timeout, or DefaultTimeout.
func (s Server) CallTimeout() time.Duration {
	if d, err := time.ParseDuration(s.Timeout); err == nil && d > 0 {
		return d
	}
	return DefaultTimeout
}

func validName(name string) error {
	if name == "" {
		return errors.New("a server needs a name")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("the name may hold only letters, digits, '-' and '_' (its tools are called mcp__%s__TOOL), not %q", name, r)
		}
	}
	if strings.Contains(name, "__") {
		return errors.New(`the name may not hold "__", which separates the server from the tool in mcp__SERVER__TOOL`)
	}
	return nil
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return err
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: want an http:// or https:// URL", raw)
	case u.Host == "":
		return fmt.Errorf("%q: no host", raw)
	}
	return nil
}

// expanded is the server with ${VAR} and ${VAR:-default} replaced from
// lookup. A variable that is not set and has no default is an error
// naming it, so that a server is never started (or a token sent) with a
// hole in its settings.
func (s Server) expanded(name string, lookup func(string) (string, bool)) (Server, error) {
	var missing []string
	ex := func(v string) string {
		out, miss := expand(v, lookup)
		missing = append(missing, miss...)
		return out
	}
	out := s
	out.Command = ex(s.Command)
	out.Args = make([]string, len(s.Args))
	for i, a := range s.Args {
		out.Args[i] = ex(a)
	}
	out.Env = map[string]string{}
	for k, v := range s.Env {
		out.Env[k] = ex(v)
	}
	out.URL = ex(s.URL)
	out.Headers = map[string]string{}
	for k, v := range s.Headers {
		out.Headers[k] = ex(v)
	}
	if s.OAuth != nil {
		o := *s.OAuth
		o.ClientID, o.ClientSecret = ex(o.ClientID), ex(o.ClientSecret)
		o.Scopes = slices.Clone(o.Scopes)
		out.OAuth = &o
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return out, fmt.Errorf("%w: %q: the environment does not set %s (and the settings give no ${VAR:-default})",
			ErrConfig, name, strings.Join(slices.Compact(missing), ", "))
	}
	if out.Transport() == facts.MCPHTTP {
		if err := checkURL(out.URL); err != nil {
			return out, fmt.Errorf("%w: %q: url: %v", ErrConfig, name, err)
		}
	}
	return out, nil
}

// expand replaces ${VAR} and ${VAR:-default} in v; a "$" not followed by
// "{" is itself. It returns the names that were neither set nor defaulted.
func expand(v string, lookup func(string) (string, bool)) (string, []string) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var b strings.Builder
	var missing []string
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			return b.String(), missing
		}
		j := strings.IndexByte(v[i:], '}')
		if j < 0 {
			b.WriteString(v)
			return b.String(), missing
		}
		b.WriteString(v[:i])
		ref := v[i+2 : i+j]
		name, def, hasDef := strings.Cut(ref, ":-")
		if val, ok := lookup(name); ok && (val != "" || !hasDef) {
			b.WriteString(val)
		} else if hasDef {
			b.WriteString(def)
		} else {
			missing = append(missing, name)
		}
		v = v[i+j+1:]
	}
}
