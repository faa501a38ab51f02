package harnesstest

import (
	"encoding/json"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
)

// Turn is one model turn of a Script: what the model says, the tool calls
// it asks for, or a question for a person. Thread, when set, gives the
// turn to that thread only — a child of a delegation, say (see
// model.Scripted).
type Turn struct {
	Thread   string           `json:"thread,omitempty"`
	Text     string           `json:"text,omitempty"`
	Calls    []facts.ToolCall `json:"tool_calls,omitempty"`
	Question *facts.Question  `json:"question,omitempty"`
}

// Say is a turn that says text and asks for nothing: a thread given it
// is done.
func Say(text string) Turn { return Turn{Text: text} }

// Act is a turn that says text and asks for calls.
func Act(text string, calls ...facts.ToolCall) Turn { return Turn{Text: text, Calls: calls} }

// Ask is a turn that asks a person question, offering options.
func Ask(question string, options ...string) Turn {
	return Turn{Question: &facts.Question{Text: question, Options: options}}
}

// Call is the call id of tool with args, the JSON the model writes.
func Call(id, tool, args string) facts.ToolCall {
	return facts.ToolCall{ID: id, Name: tool, Args: args}
}

// Script is the turns as the script of a scripted model (model.ParseScript;
// New and the other constructors take one): the Nth turn for the Nth
// model turn of a thread.
func Script(turns ...Turn) string {
	lines := make([]string, len(turns))
	for i, t := range turns {
		b, err := json.Marshal(t)
		if err != nil {
			panic(err) // a Turn holds strings only
		}
		lines[i] = string(b)
	}
	return strings.Join(lines, "\n")
}
