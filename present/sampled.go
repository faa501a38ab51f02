package present

import (
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
)

// describeSampled says what an MCP server's sampling turn was: whose, what
// it sent and got (quoted: both are the server's and the model's words),
// its tokens and cost.
func describeSampled(p facts.ModelSampled) string {
	s := fmt.Sprintf("%s: MCP %s asked the model (%s, %s, at most %s)", p.ActionID, EscapeLine(p.Server), Plural(p.Messages, "message", "messages"), Plural(p.Bytes, "byte", "bytes"), Plural(p.MaxTokens, "token", "tokens"))
	if p.IncludeContext != "" && p.IncludeContext != "none" {
		s += " · asked for context " + quote(p.IncludeContext, 20) + ", given none"
	}
	if p.Error != "" {
		return s + fmt.Sprintf(" · failed (%s): %s", p.Class, quote(p.Error, 160))
	}
	s += ": " + quote(p.Text, 100)
	if p.Dropped > 0 {
		s += " · " + Plural(p.Dropped, "tool call", "tool calls") + " dropped"
	}
	if u := p.Usage; u.InputTokens+u.OutputTokens > 0 {
		s += " · " + Plural(u.InputTokens+u.OutputTokens, "token", "tokens")
	}
	if p.Cost != nil {
		s += fmt.Sprintf(" · $%.4f", p.Cost.USD)
	}
	return s
}
