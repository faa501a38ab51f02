package model

import (
	"github.com/seed-7cc7a084/harness/facts"
)

// NoResult is the tool result a provider is shown for a call whose result
// the conversation does not have.
const NoResult = "No result was recorded for this tool call."

// Paired returns the conversation in the shape the APIs of OpenAI and
// Anthropic require: the
// results of an assistant message's tool calls directly after it, one per
// call, in the order of the calls. A thread's log can hold other shapes —
// a person's message posted while a call waited for confirmation lands
// between the call and its result; a compaction can summarize a call away
// and keep its result — and both APIs refuse those.
//
// So: a tool result is moved up to follow the call it answers; a call with
// no result gets one saying so; a result whose call is not in the
// conversation becomes a user message that names the call. The log itself
// is not changed; only what the provider is shown.
func Paired(msgs []facts.Message) []facts.Message {
	// Where each call is answered: the first tool message naming it after
	// the assistant message that made it.
	used := make([]bool, len(msgs))
	out := make([]facts.Message, 0, len(msgs))
	for i, m := range msgs {
		switch {
		case m.Role == facts.RoleTool:
			if used[i] {
				continue
			}
			used[i] = true
			text := "Result of tool call " + m.ToolCallID + ":\n" + m.Text
			if m.ToolCallID == "" {
				text = "Result of a tool call:\n" + m.Text
			}
			out = append(out, facts.Message{Role: facts.RoleUser, Text: text, Seq: m.Seq})
		case m.Role == facts.RoleAssistant && len(m.ToolCalls) > 0:
			out = append(out, m)
			for _, c := range m.ToolCalls {
				found := false
				for j := i + 1; j < len(msgs); j++ {
					if msgs[j].Role == facts.RoleAssistant && len(msgs[j].ToolCalls) > 0 {
						break // the next turn's calls: an answer past it is not this call's
					}
					if !used[j] && msgs[j].Role == facts.RoleTool && msgs[j].ToolCallID == c.ID {
						used[j], found = true, true
						out = append(out, msgs[j])
						break
					}
				}
				if !found {
					out = append(out, facts.Message{Role: facts.RoleTool, ToolCallID: c.ID, Text: NoResult, Seq: m.Seq})
				}
			}
		default:
			out = append(out, m)
		}
	}
	return out
}
