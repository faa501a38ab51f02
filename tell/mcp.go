package tell

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
)

// MCPServerDoc is an MCP server of the settings as the command line's
// JSON lists it: how it is reached, whether it could be used, and the
// tools the model is offered.
type MCPServerDoc struct {
	Name      string         `json:"name"`
	Transport string         `json:"transport"`
	Endpoint  string         `json:"endpoint"`
	Status    mcp.State      `json:"status"`
	Error     string         `json:"error,omitempty"`
	Trusted   bool           `json:"trusted,omitempty"`
	Changed   bool           `json:"changed,omitempty"`
	Tools     []mcp.ToolInfo `json:"tools"`
	Skipped   []string       `json:"skipped,omitempty"`
	Protocol  string         `json:"protocol,omitempty"`
	Resources bool           `json:"resources,omitempty"`
	Sampling  bool           `json:"sampling,omitempty"`
}

// MCPServerDocs are the servers' documents, in order; never nil.
func MCPServerDocs(status []mcp.Status) []MCPServerDoc {
	out := []MCPServerDoc{}
	for _, s := range status {
		tools := s.Tools
		if tools == nil {
			tools = []mcp.ToolInfo{}
		}
		out = append(out, MCPServerDoc{Name: s.Name, Transport: s.Transport, Endpoint: s.Endpoint, Status: s.State, Error: s.Error,
			Trusted: s.Trusted, Changed: s.Changed, Tools: tools, Skipped: s.Skipped, Protocol: s.Protocol,
			Resources: s.Resources, Sampling: s.Sampling})
	}
	return out
}

// MCPFailed counts the servers that could not be used.
func MCPFailed(status []mcp.Status) int {
	n := 0
	for _, s := range status {
		if s.State != mcp.Connected {
			n++
		}
	}
	return n
}

// MCPServers tells the servers and their tools: for each its transport,
// endpoint and status, then a tool a line with whether a call asks a
// person. With no server it says why: none in settingsFile, or those of
// an untrusted file left out. What a server says is escaped.
func MCPServers(w io.Writer, status []mcp.Status, untrusted []stock.SettingsSource, settingsFile string, paint Paint) {
	esc := present.EscapeLine
	if len(status) == 0 {
		for _, src := range untrusted {
			if slices.Contains(src.Ignored, "mcpServers") {
				fmt.Fprintf(w, "no MCP servers started: those of %s are left out until you trust it (harness trust)\n", esc(src.Path))
				return
			}
		}
		fmt.Fprintf(w, "no MCP servers in %s (add \"mcpServers\", as in Claude Code's .mcp.json)\n", esc(settingsFile))
		return
	}
	for i, s := range status {
		if i > 0 {
			fmt.Fprintln(w)
		}
		state := paint.on("red", string(s.State))
		if s.State == mcp.Connected {
			state = paint.on("green", string(s.State))
		}
		trust := ""
		if s.Trusted {
			trust = " · trusted"
		}
		proto := ""
		if s.Protocol != "" {
			proto = " · MCP " + esc(s.Protocol)
		}
		if s.Resources {
			proto += " · resources (" + mcp.ReadResourceTool + ")"
		}
		if s.Sampling {
			proto += " · sampling allowed"
		}
		fmt.Fprintf(w, "%s  %s %s  %s%s%s\n", paint.on("bold", esc(s.Name)), s.Transport, esc(s.Endpoint), state, trust, proto)
		if s.Error != "" {
			fmt.Fprintf(w, "    %s\n", esc(s.Error))
		}
		for _, t := range s.Tools {
			policy := "ask"
			if !t.Confirm {
				policy = "read-only"
			}
			desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
			if len(desc) > 70 {
				desc = desc[:70] + "…"
			}
			fmt.Fprintf(w, "    %-40s %-9s %s\n", esc(t.Name), policy, esc(desc))
		}
		for _, sk := range s.Skipped {
			fmt.Fprintf(w, "    %s %s\n", paint.on("yellow", "not offered:"), esc(sk))
		}
		if s.Changed {
			fmt.Fprintf(w, "    %s the server changed its tool list since it was reached\n", paint.on("yellow", "changed:"))
		}
	}
}

// MCPPrompts tells the prompts the servers offer: server/name, the
// arguments (* required) and the description, escaped.
func MCPPrompts(w io.Writer, prompts []mcp.PromptInfo, paint Paint) {
	if len(prompts) == 0 {
		fmt.Fprintf(w, "no connected MCP server offers prompts (harness mcp list)\n")
		return
	}
	esc := present.EscapeLine
	for _, pr := range prompts {
		var as []string
		for _, x := range pr.Arguments {
			n := esc(x.Name)
			if x.Required {
				n += "*"
			}
			as = append(as, n)
		}
		fmt.Fprintf(w, "%s/%s", paint.on("bold", esc(pr.Server)), esc(pr.Name))
		if len(as) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(as, ", "))
		}
		if pr.Description != "" {
			fmt.Fprintf(w, "  %s", esc(pr.Description))
		}
		fmt.Fprintf(w, "\n")
	}
}
