package model

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/seed-7cc7a084/harness/facts"
)

// DefaultAnthropicMaxTokens bounds an Anthropic turn when WithMaxTokens
// does not: the messages API requires a bound.
const DefaultAnthropicMaxTokens = 4096

// Anthropic is a Model on the Anthropic messages API
// (POST {base}/v1/messages).
//
// The API key is ANTHROPIC_API_KEY and the base URL ANTHROPIC_BASE_URL
// (default https://api.anthropic.com), unless WithAPIKey or WithBaseURL say
// otherwise; no other credential source of the SDK is consulted. The SDK's
// own retries are off: the harness retries transient failures itself
// (Config.ModelAttempts), and a retry inside the SDK would hide attempts
// from the log.
//
// Tool schemas go out as tools with an input schema; tool_use blocks come
// back as tool calls whose arguments are the input's JSON text; tool
// results go back as tool_result blocks in a user message, all the results
// of one assistant message together, first in that message. The AskTool
// pseudo-tool is offered too (see AskTool).
type Anthropic struct {
	client    anthropic.Client
	model     string
	maxTokens int64
	ep        endpoint
	opts      options
}

// NewAnthropic returns the Anthropic model named model. Without an API key
// it is an error, unless a base URL is given (a proxy may hold the key).
func NewAnthropic(model string, opts ...Option) (*Anthropic, error) {
	if model == "" {
		return nil, fmt.Errorf("anthropic: %w: no model name; want anthropic:MODEL", ErrSpec)
	}
	o := newOptions(opts)
	base, key := o.env("ANTHROPIC_BASE_URL"), o.env("ANTHROPIC_API_KEY")
	if o.baseURL != nil {
		base = *o.baseURL
	}
	if o.apiKey != nil {
		key = *o.apiKey
	}
	if key == "" && base == "" {
		return nil, fmt.Errorf("anthropic:%s: ANTHROPIC_API_KEY is not set", model)
	}
	if base == "" {
		base = "https://api.anthropic.com"
	}
	copts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithBaseURL(base), option.WithMaxRetries(0)}
	if key != "" {
		copts = append(copts, option.WithAPIKey(key))
	}
	if o.client != nil {
		copts = append(copts, option.WithHTTPClient(o.client))
	}
	maxTokens := o.maxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultAnthropicMaxTokens
	}
	return &Anthropic{
		client:    anthropic.NewClient(copts...),
		model:     model,
		maxTokens: maxTokens,
		ep:        endpoint{provider: "anthropic", model: model, baseURL: base, keyVar: "ANTHROPIC_API_KEY", baseVar: "ANTHROPIC_BASE_URL"},
		opts:      o,
	}, nil
}

// Name is the model's name, as it is sent.
func (m *Anthropic) Name() string { return m.model }

// Turn takes one model turn. With WithStream it streams (see Stream).
func (m *Anthropic) Turn(ctx context.Context, req Request) (Decision, error) {
	if m.opts.onText != nil {
		return m.Stream(ctx, req, m.opts.onText)
	}
	params, asks, err := m.params(req)
	if err != nil {
		return Decision{}, err
	}
	rec := &recorder{provider: "anthropic"}
	cctx, cancel := m.opts.callContext(ctx)
	defer cancel()
	res, err := m.client.Messages.New(cctx, params, option.WithMiddleware(rec.middleware))
	if err != nil {
		return Decision{}, m.ep.fail(ctx, rec, err)
	}
	d, err := anthropicDecision(res)
	if err != nil {
		return Decision{}, m.ep.fail(ctx, rec, err)
	}
	d = question(d, asks)
	d.Exchange = rec.exchange()
	return d, nil
}

// Stream takes one model turn as a stream of server-sent events, calling
// onText with each piece of text as it arrives. The decision is returned
// at message_stop; a stream that ends before it is a transport error, and
// an error event ends the turn with the error's class (overloaded: transient).
func (m *Anthropic) Stream(ctx context.Context, req Request, onText func(string)) (Decision, error) {
	params, asks, err := m.params(req)
	if err != nil {
		return Decision{}, err
	}
	rec := &recorder{provider: "anthropic"}
	cctx, cancel := m.opts.callContext(ctx)
	defer cancel()
	stream := m.client.Messages.NewStreaming(cctx, params, option.WithMiddleware(rec.middleware))
	defer stream.Close()
	var acc events
	for stream.Next() {
		acc.add(stream.Current(), onText)
	}
	if err := stream.Err(); err != nil {
		return Decision{}, m.ep.fail(ctx, rec, err)
	}
	if !acc.stopped {
		return Decision{}, m.ep.fail(ctx, rec, errIncomplete)
	}
	d := question(acc.decision(), asks)
	d.Exchange = rec.exchange()
	return d, nil
}

// turnMessage is one message of the request, before it is an SDK value.
type turnMessage struct {
	user   bool
	blocks []anthropic.ContentBlockParamUnion
}

// params is the request a turn sends.
func (m *Anthropic) params(req Request) (anthropic.MessageNewParams, bool, error) {
	p := anthropic.MessageNewParams{Model: anthropic.Model(m.model), MaxTokens: m.maxTokens}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	var msgs []turnMessage
	add := func(user bool, b anthropic.ContentBlockParamUnion) {
		// The API wants user and assistant to take turns: consecutive
		// messages of one role are one message.
		if n := len(msgs); n > 0 && msgs[n-1].user == user {
			msgs[n-1].blocks = append(msgs[n-1].blocks, b)
			return
		}
		msgs = append(msgs, turnMessage{user: user, blocks: []anthropic.ContentBlockParamUnion{b}})
	}
	for _, msg := range paired(req.Messages) {
		switch msg.Role {
		case facts.RoleUser:
			if strings.TrimSpace(msg.Text) != "" {
				add(true, anthropic.NewTextBlock(msg.Text))
			}
		case facts.RoleTool:
			add(true, anthropic.NewToolResultBlock(toolUseID(msg.ToolCallID), msg.Text, false))
		case facts.RoleAssistant:
			if strings.TrimSpace(msg.Text) != "" {
				add(false, anthropic.NewTextBlock(msg.Text))
			}
			for _, c := range msg.ToolCalls {
				add(false, anthropic.NewToolUseBlock(toolUseID(c.ID), inputObject(c.Args), c.Name))
			}
		default:
			return p, false, fmt.Errorf("anthropic: message role %q: want user, assistant or tool", msg.Role)
		}
	}
	if len(msgs) > 0 && !msgs[0].user {
		// The conversation must open with the user.
		msgs = append([]turnMessage{{user: true, blocks: []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock("(The conversation so far follows.)")}}}, msgs...)
	}
	for _, tm := range msgs {
		if tm.user {
			// Tool results come first in their message.
			slices.SortStableFunc(tm.blocks, func(a, b anthropic.ContentBlockParamUnion) int {
				return boolInt(b.OfToolResult != nil) - boolInt(a.OfToolResult != nil)
			})
			p.Messages = append(p.Messages, anthropic.NewUserMessage(tm.blocks...))
		} else {
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(tm.blocks...))
		}
	}
	tools, asks := offered(req.Tools, !m.opts.noAsk)
	for _, t := range tools {
		if _, err := schemaObject(t); err != nil {
			return p, false, fmt.Errorf("anthropic: %w", err)
		}
		schema := json.RawMessage(t.Schema)
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		// The schema goes out as the tool wrote it, byte for byte, so the
		// tools — part of the prompt's cached prefix — are the same bytes
		// every turn.
		tp := &anthropic.ToolParam{Name: t.Name, InputSchema: param.Override[anthropic.ToolInputSchemaParam](schema)}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: tp})
	}
	return p, asks, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// toolUseID makes a call id one the API takes (letters, digits, '_' and
// '-'), the same way for a call and its result.
func toolUseID(id string) string {
	if id == "" {
		return "call"
	}
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, id)
}

// inputObject is a call's arguments as a tool_use input, which must be a
// JSON object: arguments that are not one are sent as {} (the tool's
// result already told the model they were not valid).
func inputObject(args string) json.RawMessage {
	a := strings.TrimSpace(args)
	if strings.HasPrefix(a, "{") && json.Valid([]byte(a)) {
		return json.RawMessage(a)
	}
	return json.RawMessage(`{}`)
}

// inputArgs is a tool_use input as the arguments of a call: its JSON
// text, or — from a server that sends a string holding JSON — the string.
func inputArgs(raw string) string {
	raw = strings.TrimSpace(raw)
	if strings.HasPrefix(raw, `"`) {
		if s, err := strconv.Unquote(raw); err == nil {
			return s
		}
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil {
			return s
		}
	}
	return raw
}

func anthropicUsage(u anthropic.Usage) facts.Usage {
	return facts.Usage{
		InputTokens:  u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens: u.OutputTokens,
	}
}

// anthropicDecision reads a message.
func anthropicDecision(res *anthropic.Message) (Decision, error) {
	if res == nil || !res.JSON.Content.Valid() {
		return Decision{}, fmt.Errorf("%w: no content", errMalformed)
	}
	d := Decision{Usage: anthropicUsage(res.Usage)}
	var text strings.Builder
	for _, b := range res.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			d.ToolCalls = append(d.ToolCalls, facts.ToolCall{ID: b.ID, Name: b.Name, Args: inputArgs(b.JSON.Input.Raw())})
		}
	}
	d.Text = text.String()
	return d, nil
}

// events accumulates a streamed message.
type events struct {
	blocks  []*streamBlock
	usage   facts.Usage
	stopped bool
}

type streamBlock struct {
	index   int64
	kind    string
	text    strings.Builder
	id      string
	name    string
	input   string // the input of content_block_start
	partial strings.Builder
}

func (a *events) block(index int64) *streamBlock {
	for _, b := range a.blocks {
		if b.index == index {
			return b
		}
	}
	return nil
}

func (a *events) add(ev anthropic.MessageStreamEventUnion, onText func(string)) {
	switch ev.Type {
	case "message_start":
		a.usage = anthropicUsage(ev.Message.Usage)
	case "content_block_start":
		b := &streamBlock{index: ev.Index, kind: ev.ContentBlock.Type, id: ev.ContentBlock.ID, name: ev.ContentBlock.Name,
			input: ev.ContentBlock.JSON.Input.Raw()}
		b.text.WriteString(ev.ContentBlock.Text)
		if onText != nil && b.kind == "text" && ev.ContentBlock.Text != "" {
			onText(ev.ContentBlock.Text)
		}
		a.blocks = append(a.blocks, b)
	case "content_block_delta":
		b := a.block(ev.Index)
		if b == nil {
			return
		}
		switch ev.Delta.Type {
		case "text_delta":
			b.text.WriteString(ev.Delta.Text)
			if onText != nil && ev.Delta.Text != "" {
				onText(ev.Delta.Text)
			}
		case "input_json_delta":
			b.partial.WriteString(ev.Delta.PartialJSON)
		}
	case "message_delta":
		if u := ev.Usage; u.InputTokens != 0 || u.OutputTokens != 0 {
			if in := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens; in != 0 {
				a.usage.InputTokens = in
			}
			a.usage.OutputTokens = u.OutputTokens
		}
	case "message_stop":
		a.stopped = true
	}
}

func (a *events) decision() Decision {
	d := Decision{Usage: a.usage}
	var text strings.Builder
	for _, b := range a.blocks {
		switch b.kind {
		case "text":
			text.WriteString(b.text.String())
		case "tool_use":
			args := b.partial.String()
			if args == "" {
				args = inputArgs(b.input)
			}
			d.ToolCalls = append(d.ToolCalls, facts.ToolCall{ID: b.id, Name: b.name, Args: args})
		}
	}
	d.Text = text.String()
	return d
}
