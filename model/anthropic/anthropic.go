package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/internal/call"
)

// DefaultMaxTokens bounds a turn when model.WithMaxTokens does not: the
// messages API requires a bound.
const DefaultMaxTokens = 4096

// Model is a model.Model on the Anthropic messages API
// (POST {base}/v1/messages).
//
// The API key is ANTHROPIC_API_KEY and the base URL ANTHROPIC_BASE_URL
// (default https://api.anthropic.com), unless model.WithAPIKey or
// model.WithBaseURL say otherwise; no other credential source of the SDK
// is consulted. The SDK's own retries are off: the harness retries
// transient failures itself (harness.Config.ModelAttempts, honouring the
// server's Retry-After within harness.Config.ModelMaxWait), and a retry
// inside the SDK would hide attempts from the log.
//
// Tool schemas go out as tools with an input schema; tool_use blocks come
// back as tool calls whose arguments are the input's JSON text; tool
// results go back as tool_result blocks in a user message, all the results
// of one assistant message together, first in that message. The AskTool
// pseudo-tool is offered too (see model.AskTool).
type Model struct {
	client    sdk.Client
	model     string
	maxTokens int64
	ep        call.Endpoint
	opts      model.Options
}

// New returns the Anthropic model named name. Without an API key it is an
// error, unless a base URL is given (a proxy may hold the key).
func New(name string, opts ...model.Option) (*Model, error) {
	if name == "" {
		return nil, fmt.Errorf("anthropic: %w: no model name; want anthropic:MODEL", model.ErrSpec)
	}
	o := model.NewOptions(opts...)
	base, key := o.Endpoint("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")
	if key == "" && base == "" {
		return nil, fmt.Errorf("anthropic:%s: ANTHROPIC_API_KEY is not set; set it (a Go program may pass model.WithAPIKey)", name)
	}
	if base == "" {
		base = "https://api.anthropic.com"
	}
	copts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithBaseURL(base), option.WithMaxRetries(0)}
	if key != "" {
		copts = append(copts, option.WithAPIKey(key))
	}
	if o.HTTPClient != nil {
		copts = append(copts, option.WithHTTPClient(o.HTTPClient))
	}
	maxTokens := o.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	return &Model{
		client:    sdk.NewClient(copts...),
		model:     name,
		maxTokens: maxTokens,
		ep: call.Endpoint{Provider: "anthropic", Model: name, BaseURL: base, KeyVar: "ANTHROPIC_API_KEY", BaseVar: "ANTHROPIC_BASE_URL",
			StreamError: streamError},
		opts: o,
	}, nil
}

// streamError reads the data of an error event that ended a stream.
func streamError(err error) ([]byte, bool) {
	var ae *sdk.Error
	if errors.As(err, &ae) {
		return []byte(ae.RawJSON()), true
	}
	return nil, false
}

// Name is the model's name, as it is sent.
func (m *Model) Name() string { return m.model }

// Turn takes one model turn. With model.WithStream it streams (see
// Stream).
func (m *Model) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	return m.loop().Turn(ctx, req)
}

// Stream takes one model turn as a stream of server-sent events, calling
// onText with each piece of text as it arrives. The decision is returned
// at message_stop; a stream that is cut off or ends before it is a
// transient error matching model.ErrStreamCut, and an error event ends the
// turn with the error's class (overloaded: transient). An answer cut off
// at a limit (stop_reason "max_tokens") is a decision with Cut set.
func (m *Model) Stream(ctx context.Context, req model.Request, onText func(string)) (model.Decision, error) {
	return m.loop().Stream(ctx, req, onText)
}

// loop is a turn of this model: the shared loop, with the messages API's
// own pieces.
func (m *Model) loop() call.Loop[sdk.MessageNewParams, *sdk.Message, sdk.MessageStreamEventUnion] {
	return call.Loop[sdk.MessageNewParams, *sdk.Message, sdk.MessageStreamEventUnion]{
		Endpoint: m.ep,
		Options:  m.opts,
		Params:   m.params,
		Send: func(ctx context.Context, p sdk.MessageNewParams, mw call.Middleware) (*sdk.Message, error) {
			return m.client.Messages.New(ctx, p, option.WithMiddleware(mw))
		},
		Decode: decision,
		Open: func(ctx context.Context, p sdk.MessageNewParams, mw call.Middleware) call.Events[sdk.MessageStreamEventUnion] {
			return m.client.Messages.NewStreaming(ctx, p, option.WithMiddleware(mw))
		},
		NewAccumulator: func() call.Accumulator[sdk.MessageStreamEventUnion] { return &events{} },
		CutOff:         cutOff,
	}
}

// cutOff: stop_reason "max_tokens" is an answer stopped at the output
// limit; "model_context_window_exceeded" one stopped at the end of the
// context.
func cutOff(reason string) bool {
	return reason == "max_tokens" || reason == "model_context_window_exceeded"
}

// turnMessage is one message of the request, before it is an SDK value.
type turnMessage struct {
	user   bool
	blocks []sdk.ContentBlockParamUnion
}

// params is the request a turn sends.
func (m *Model) params(req model.Request) (sdk.MessageNewParams, bool, error) {
	p := sdk.MessageNewParams{Model: sdk.Model(m.model), MaxTokens: m.maxTokens}
	if req.MaxTokens > 0 && req.MaxTokens < p.MaxTokens {
		p.MaxTokens = req.MaxTokens
	}
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	var msgs []turnMessage
	add := func(user bool, b sdk.ContentBlockParamUnion) {
		// The API wants user and assistant to take turns: consecutive
		// messages of one role are one message.
		if n := len(msgs); n > 0 && msgs[n-1].user == user {
			msgs[n-1].blocks = append(msgs[n-1].blocks, b)
			return
		}
		msgs = append(msgs, turnMessage{user: user, blocks: []sdk.ContentBlockParamUnion{b}})
	}
	for _, msg := range model.Paired(req.Messages) {
		switch msg.Role {
		case facts.RoleUser:
			if strings.TrimSpace(msg.Text) != "" {
				add(true, sdk.NewTextBlock(msg.Text))
			}
		case facts.RoleTool:
			add(true, sdk.NewToolResultBlock(toolUseID(msg.ToolCallID), msg.Text, false))
		case facts.RoleAssistant:
			if strings.TrimSpace(msg.Text) != "" {
				add(false, sdk.NewTextBlock(msg.Text))
			}
			for _, c := range msg.ToolCalls {
				add(false, sdk.NewToolUseBlock(toolUseID(c.ID), inputObject(c.Args), c.Name))
			}
		default:
			return p, false, fmt.Errorf("anthropic: message role %q: want user, assistant or tool", msg.Role)
		}
	}
	if len(msgs) > 0 && !msgs[0].user {
		// The conversation must open with the user.
		msgs = append([]turnMessage{{user: true, blocks: []sdk.ContentBlockParamUnion{sdk.NewTextBlock("(The conversation so far follows.)")}}}, msgs...)
	}
	for i, tm := range msgs {
		if tm.user {
			// Tool results come first in their message.
			slices.SortStableFunc(tm.blocks, func(a, b sdk.ContentBlockParamUnion) int {
				return boolInt(b.OfToolResult != nil) - boolInt(a.OfToolResult != nil)
			})
		}
		if i == len(msgs)-1 {
			cacheLast(tm.blocks)
		}
		if tm.user {
			p.Messages = append(p.Messages, sdk.NewUserMessage(tm.blocks...))
		} else {
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(tm.blocks...))
		}
	}
	tools, asks := model.OfferTools(req.Tools, !m.opts.NoAskTool)
	for _, t := range tools {
		if err := checkSchema(t); err != nil {
			return p, false, fmt.Errorf("anthropic: %w", err)
		}
		schema := json.RawMessage(t.Schema)
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		// The schema goes out as the tool wrote it, byte for byte, so the
		// tools — part of the prompt's cached prefix — are the same bytes
		// every turn.
		tp := &sdk.ToolParam{Name: t.Name, InputSchema: param.Override[sdk.ToolInputSchemaParam](schema)}
		if t.Description != "" {
			tp.Description = sdk.String(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: tp})
	}
	cachePrefix(&p)
	return p, asks, nil
}

// cachePrefix asks the API to cache the prompt's stable prefix (prompt
// caching): a breakpoint after the system prompt — the tools come before
// it, so both are cached — or after the last tool when there is no system
// prompt, and one on the last block of the conversation, so that the next
// turn, which repeats the conversation and adds to it, reads all of it
// from the cache. Two of the four breakpoints the API allows; a prefix
// shorter than the model's minimum is simply not cached. What was read
// from and written to the cache comes back in the usage (and is priced:
// see model.Prices).
func cachePrefix(p *sdk.MessageNewParams) {
	switch {
	case len(p.System) > 0:
		p.System[len(p.System)-1].CacheControl = sdk.NewCacheControlEphemeralParam()
	case len(p.Tools) > 0 && p.Tools[len(p.Tools)-1].OfTool != nil:
		p.Tools[len(p.Tools)-1].OfTool.CacheControl = sdk.NewCacheControlEphemeralParam()
	}
}

// cacheLast marks the last block of the conversation as the end of the
// prefix to cache (see cachePrefix).
func cacheLast(blocks []sdk.ContentBlockParamUnion) {
	if k := len(blocks); k > 0 {
		if cc := blocks[k-1].GetCacheControl(); cc != nil {
			*cc = sdk.NewCacheControlEphemeralParam()
		}
	}
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

func usage(u sdk.Usage) facts.Usage {
	return facts.Usage{
		InputTokens:      u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
}

// decision reads a message.
func decision(res *sdk.Message) (model.Decision, error) {
	if res == nil || !res.JSON.Content.Valid() {
		return model.Decision{}, fmt.Errorf("%w: no content", call.ErrMalformed)
	}
	d := model.Decision{Usage: usage(res.Usage), StopReason: string(res.StopReason)}
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
	reason  string // message_delta's stop_reason
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

// Add folds one event in.
func (a *events) Add(ev sdk.MessageStreamEventUnion, onText func(string)) {
	switch ev.Type {
	case "message_start":
		a.usage = usage(ev.Message.Usage)
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
		if r := ev.Delta.StopReason; r != "" {
			a.reason = string(r)
		}
		if u := ev.Usage; u.InputTokens != 0 || u.OutputTokens != 0 {
			if in := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens; in != 0 {
				a.usage.InputTokens = in
				a.usage.CacheReadTokens, a.usage.CacheWriteTokens = u.CacheReadInputTokens, u.CacheCreationInputTokens
			}
			a.usage.OutputTokens = u.OutputTokens
		}
	case "message_stop":
		a.stopped = true
	}
}

// Finished reports whether message_stop came.
func (a *events) Finished() bool { return a.stopped }

// Decision is the turn the events made.
func (a *events) Decision() model.Decision {
	d := model.Decision{Usage: a.usage, StopReason: a.reason}
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

// checkSchema refuses a tool whose schema is not a JSON object.
func checkSchema(t facts.ToolSchema) error {
	if len(t.Schema) == 0 {
		return nil
	}
	var s map[string]any
	if err := json.Unmarshal(t.Schema, &s); err != nil {
		return fmt.Errorf("tool %q: schema is not a JSON object: %w", t.Name, err)
	}
	return nil
}
