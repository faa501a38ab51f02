package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/facts"
)

// Prompts from servers: a server that declares prompts offers them to a
// person (never to the model): harness mcp prompts lists them, and a
// person starts a thread with one (harness run --mcp-prompt). Only the
// client's connected servers are reached — those the thread's settings
// name, an untrusted project file's only after harness trust. What a
// server says (its prompts' names, descriptions, text) is its word:
// bounded, and given to the thread as the person's chosen message, with
// the server, the prompt and the digest of the arguments recorded on it
// (facts.MCPPrompt).

// Bounds of servers' prompts.
const (
	// MaxPrompt bounds a prompt's text, in bytes: a larger one is not
	// taken (ErrPromptTooLarge).
	MaxPrompt = 64 << 10
	// MaxPromptArgs bounds the arguments given, and MaxPromptArg each
	// one's value in bytes.
	MaxPromptArgs = 32
	MaxPromptArg  = 4 << 10
)

// PromptInfo is a server's prompt, as its list gives it: each word the
// server's, one line and bounded.
type PromptInfo struct {
	Server      string           `json:"server"`
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is an argument a prompt declares.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// promptServers are the connected servers that declared prompts, in name
// order; only the one named when name is not "".
func (c *Client) promptServers(name string) []*conn {
	var out []*conn
	for _, s := range c.servers {
		s.mu.Lock()
		ok := s.prompts && s.err == nil && s.session != nil
		s.mu.Unlock()
		if ok && (name == "" || s.name == name) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *conn) int { return strings.Compare(a.name, b.name) })
	return out
}

// Prompts lists the prompts of the connected servers that declared some
// (of server only, when it is not ""), up to MaxListed a server. A
// server named that offers none is ErrNoPrompts.
func (c *Client) Prompts(ctx context.Context, server string) ([]PromptInfo, error) {
	servers := c.promptServers(server)
	if server != "" && len(servers) == 0 {
		return nil, fmt.Errorf("%q: %w", serverWord(server, 100), ErrNoPrompts)
	}
	out := []PromptInfo{}
	for _, s := range servers {
		listed, err := s.listPrompts(ctx)
		if err != nil {
			return nil, fmt.Errorf("server %s: list prompts: %w", s.name, err)
		}
		for _, p := range listed {
			out = append(out, promptInfo(s.name, p))
		}
	}
	return out, nil
}

// listPrompts reads the server's prompts, page by page, up to MaxListed,
// within the server's timeout.
func (s *conn) listPrompts(ctx context.Context) ([]*sdk.Prompt, error) {
	s.mu.Lock()
	session := s.session
	s.mu.Unlock()
	if session == nil {
		return nil, fmt.Errorf("server %s is not connected", s.name)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var out []*sdk.Prompt
	for p, err := range session.Prompts(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if p != nil {
			out = append(out, p)
		}
		if len(out) >= MaxListed {
			break
		}
	}
	return out, nil
}

func promptInfo(server string, p *sdk.Prompt) PromptInfo {
	info := PromptInfo{Server: server, Name: serverWord(p.Name, 200), Title: serverWord(p.Title, 200), Description: serverWord(p.Description, 500)}
	for _, a := range p.Arguments {
		if a != nil && len(info.Arguments) < MaxPromptArgs {
			info.Arguments = append(info.Arguments, PromptArgument{Name: serverWord(a.Name, 100), Description: serverWord(a.Description, 300), Required: a.Required})
		}
	}
	return info
}

// ArgsDigest is the digest a user message records of a prompt's
// arguments: sha256 of their JSON object (keys in order).
func ArgsDigest(args map[string]string) string {
	if len(args) == 0 {
		return ""
	}
	b, _ := json.Marshal(args) // a map of strings: keys sorted
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Prompt gets the prompt name of server with args, checked against the
// arguments the server lists for it (none unknown, the required given,
// at most MaxPromptArgs of MaxPromptArg bytes), and gives it as a user
// message: the messages' text in order (an assistant's marked, an
// embedded resource's text under its URI, other contents named by type),
// at most MaxPrompt bytes, with the server, the prompt and the digest of
// args recorded (facts.UserMessage.Prompt). The text is the server's:
// the person who chose it sees it before it is sent (escaped).
func (c *Client) Prompt(ctx context.Context, server, name string, args map[string]string) (facts.UserMessage, error) {
	servers := c.promptServers(server)
	if server == "" || len(servers) == 0 {
		return facts.UserMessage{}, fmt.Errorf("%q: %w", serverWord(server, 100), ErrNoPrompts)
	}
	s := servers[0]
	listed, err := s.listPrompts(ctx)
	if err != nil {
		return facts.UserMessage{}, fmt.Errorf("server %s: list prompts: %w", s.name, err)
	}
	i := slices.IndexFunc(listed, func(p *sdk.Prompt) bool { return p.Name == name })
	if i < 0 {
		return facts.UserMessage{}, fmt.Errorf("server %s lists no prompt %q (harness mcp prompts %s)", s.name, serverWord(name, 100), s.name)
	}
	if err := checkPromptArgs(listed[i], args); err != nil {
		return facts.UserMessage{}, fmt.Errorf("prompt %s/%s: %w", s.name, name, err)
	}
	s.mu.Lock()
	session := s.session
	s.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	res, err := session.GetPrompt(cctx, &sdk.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return facts.UserMessage{}, fmt.Errorf("server %s: get prompt %s: %w", s.name, name, err)
	}
	text, err := promptText(res)
	if err != nil {
		return facts.UserMessage{}, fmt.Errorf("prompt %s/%s: %w", s.name, name, err)
	}
	return facts.UserMessage{Text: text, Prompt: &facts.MCPPrompt{Server: s.name, Prompt: name, Args: ArgsDigest(args)}}, nil
}

// checkPromptArgs checks args against the arguments p declares.
func checkPromptArgs(p *sdk.Prompt, args map[string]string) error {
	if len(args) > MaxPromptArgs {
		return fmt.Errorf("%w: %d given, at most %d", ErrPromptArgs, len(args), MaxPromptArgs)
	}
	declared := map[string]bool{}
	for _, a := range p.Arguments {
		if a == nil {
			continue
		}
		declared[a.Name] = true
		if a.Required && strings.TrimSpace(args[a.Name]) == "" {
			return fmt.Errorf("%w: %q is required", ErrPromptArgs, serverWord(a.Name, 100))
		}
	}
	for k, v := range args {
		switch {
		case !declared[k]:
			return fmt.Errorf("%w: the prompt declares no argument %q", ErrPromptArgs, serverWord(k, 100))
		case len(v) > MaxPromptArg || !utf8.ValidString(v):
			return fmt.Errorf("%w: %q is over %d bytes or not UTF-8", ErrPromptArgs, k, MaxPromptArg)
		}
	}
	return nil
}

// promptText is the text of a prompt's messages, bounded by MaxPrompt.
func promptText(res *sdk.GetPromptResult) (string, error) {
	var parts []string
	size := 0
	for _, m := range res.Messages {
		if m == nil || m.Content == nil {
			continue
		}
		var t string
		switch c := m.Content.(type) {
		case *sdk.TextContent:
			t = c.Text
		case *sdk.EmbeddedResource:
			if c.Resource != nil {
				t = fmt.Sprintf("[resource %s]", serverWord(c.Resource.URI, 2<<10))
				if c.Resource.Text != "" {
					t += "\n" + c.Resource.Text
				}
			}
		case *sdk.ImageContent:
			t = fmt.Sprintf("[image %s, %d bytes, not given]", serverWord(c.MIMEType, 100), len(c.Data))
		case *sdk.AudioContent:
			t = fmt.Sprintf("[audio %s, %d bytes, not given]", serverWord(c.MIMEType, 100), len(c.Data))
		default:
			t = fmt.Sprintf("[%T, not given]", c)
		}
		if m.Role == "assistant" {
			t = "[assistant] " + t
		}
		size += len(t)
		if size > MaxPrompt {
			return "", fmt.Errorf("%w: over %d bytes", ErrPromptTooLarge, MaxPrompt)
		}
		parts = append(parts, t)
	}
	text := strings.Join(parts, "\n\n")
	if strings.TrimSpace(text) == "" {
		return "", ErrPromptEmpty
	}
	return text, nil
}
