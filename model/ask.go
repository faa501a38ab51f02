package model

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
)

// AskTool is the name of the pseudo-tool through which a real model asks a
// person a question. The providers offer it next to the actor's tools
// (unless a tool of that name is already there, or WithoutAskTool is
// given; see OfferTools); the model calls it with
//
//	{"text": "Which config file?", "options": ["a.toml", "b.toml"], "allow_free_text": true}
//
// and the provider returns the call as Decision.Question, so the thread
// parks on the question; the person's answer is the next user message the
// model sees. Nothing ever runs for it.
//
// It must be called alone. A call to it next to other tool calls, or one
// whose arguments are not a question (not JSON, no text), is returned as
// an ordinary tool call, which the runtime answers with a tool error, and
// the model can ask again.
const AskTool = "ask_person"

// AskSchema is the schema of the AskTool pseudo-tool as the model is
// shown it.
func AskSchema() facts.ToolSchema {
	return facts.ToolSchema{
		Name: AskTool,
		Description: "Ask the person you are working for a question, and wait for the answer. " +
			"Use it only when you cannot go on without them: a decision only they can make, or information you cannot find. " +
			"Call it alone, not together with other tools. The answer comes back as their next message.",
		Schema: facts.RawJSON(`{"type":"object","properties":{` +
			`"text":{"type":"string","description":"The question, in plain words."},` +
			`"options":{"type":"array","items":{"type":"string"},"description":"Answers the person may choose from, if there are some."},` +
			`"allow_free_text":{"type":"boolean","description":"Whether the person may answer in their own words instead of choosing an option."}},` +
			`"required":["text"]}`),
	}
}

// OfferTools returns the tools a provider shows the model: the actor's,
// and the AskTool pseudo-tool unless ask is false or an actor's tool has
// its name. asks reports whether the pseudo-tool is among them; pass it to
// AsQuestion with the decision.
func OfferTools(tools []facts.ToolSchema, ask bool) (out []facts.ToolSchema, asks bool) {
	if !ask || slices.ContainsFunc(tools, func(t facts.ToolSchema) bool { return t.Name == AskTool }) {
		return tools, false
	}
	return append(slices.Clone(tools), AskSchema()), true
}

// askArgs are the arguments of an AskTool call.
type askArgs struct {
	Text          string   `json:"text"`
	Options       []string `json:"options"`
	AllowFreeText *bool    `json:"allow_free_text"`
}

// AsQuestion turns a decision whose only tool call is the AskTool
// pseudo-tool, offered (asks, from OfferTools), into a question. Any other
// decision is returned as it is.
func AsQuestion(d Decision, asks bool) Decision {
	if !asks || len(d.ToolCalls) != 1 || d.ToolCalls[0].Name != AskTool {
		return d
	}
	var a askArgs
	if err := json.Unmarshal([]byte(d.ToolCalls[0].Args), &a); err != nil || strings.TrimSpace(a.Text) == "" {
		return d
	}
	q := &facts.Question{Text: a.Text, Options: a.Options}
	if a.AllowFreeText != nil {
		q.AllowFreeText = *a.AllowFreeText
	}
	if len(q.Options) == 0 {
		// With nothing to choose from, the person can only answer in
		// their own words.
		q.AllowFreeText = true
	}
	d.ToolCalls, d.Question = nil, q
	return d
}
