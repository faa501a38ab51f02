package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/internal/call"
)

// Model is a model.Model on an OpenAI-compatible chat completions API
// (POST {base}/chat/completions): OpenAI itself, or a local server that
// speaks the same API — Ollama (http://localhost:11434/v1), llama.cpp's
// llama-server (http://localhost:8080/v1), vLLM (http://localhost:8000/v1).
//
// The API key is OPENAI_API_KEY and the base URL OPENAI_BASE_URL, unless
// model.WithAPIKey or model.WithBaseURL say otherwise; a local server needs no key.
// OPENAI_ORG_ID, OPENAI_PROJECT_ID and OPENAI_CUSTOM_HEADERS (lines of
// "Name: value") are honoured as the SDK honours them. Every variable is
// read through model.WithLookupEnv, and nothing else: the SDK's own
// defaults from the process environment are not used, so
// model.WithAPIKey(""), model.WithLookupEnv and model.WithBaseURL mean what
// they say, and a key in the
// process environment never goes to a server it was not given for.
// The SDK's own retries are off: the harness retries transient failures
// itself (harness.Config.ModelAttempts, honouring the server's Retry-After
// within harness.Config.ModelMaxWait), and a retry inside the SDK would
// hide attempts from the log.
//
// Tool schemas go out as functions; tool calls come back with their
// arguments exactly as the model wrote them (a model, or a server, that
// writes them as a JSON object instead of a string gets the object's text);
// tool results go back as tool messages. The AskTool pseudo-tool is
// offered too (see model.AskTool).
type Model struct {
	chat  sdk.ChatCompletionService
	model string
	ep    call.Endpoint
	opts  model.Options
}

// New returns the OpenAI-compatible model named name. Without an API key
// and without a base URL it is an error: OpenAI needs the key, and a local
// server needs its URL.
func New(name string, opts ...model.Option) (*Model, error) {
	if name == "" {
		return nil, fmt.Errorf("openai: %w: no model name; want openai:MODEL", model.ErrSpec)
	}
	o := model.NewOptions(opts...)
	base, key := o.Endpoint("OPENAI_BASE_URL", "OPENAI_API_KEY")
	if key == "" && base == "" {
		return nil, fmt.Errorf("openai:%s: OPENAI_API_KEY is not set; set it, or set OPENAI_BASE_URL to use a local server (Ollama, llama.cpp, vLLM) (a Go program may pass model.WithAPIKey or model.WithBaseURL)", name)
	}
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	return &Model{
		chat:  sdk.NewChatCompletionService(requestOptions(o, base, key)...),
		model: name,
		ep: call.Endpoint{Provider: "openai", Model: name, BaseURL: base, KeyVar: "OPENAI_API_KEY", BaseVar: "OPENAI_BASE_URL",
			StreamError: streamError},
		opts: o,
	}, nil
}

// streamError reads the data of an error event that ended a stream.
func streamError(err error) ([]byte, bool) {
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return se.Event.Data, true
	}
	return nil, false
}

// responseHeaderTimeout bounds the wait for a response's headers
// (not its body, so a long stream is unaffected) on the default HTTP
// client, as the SDK's own default client does.
const responseHeaderTimeout = 10 * time.Minute

// requestOptions are the SDK's request options for base and key, and
// nothing else. The SDK's NewClient would add defaults read from the process
// environment (OPENAI_API_KEY, OPENAI_ORG_ID, OPENAI_PROJECT_ID,
// OPENAI_CUSTOM_HEADERS, …) before these, and the SDK has no public option
// to leave them out; a key from there would be sent even with
// model.WithAPIKey("") or a model.WithLookupEnv that has none, and to a
// model.WithBaseURL server. So the chat completions service is built
// directly from these options alone, and the variables that still apply
// are read through o.Env.
func requestOptions(o model.Options, base, key string) []option.RequestOption {
	client := o.HTTPClient
	if client == nil {
		client = &http.Client{Transport: http.DefaultTransport}
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			t = t.Clone()
			t.ResponseHeaderTimeout = responseHeaderTimeout
			client.Transport = t
		}
	}
	copts := []option.RequestOption{option.WithHTTPClient(client), option.WithBaseURL(base), option.WithMaxRetries(0)}
	if key != "" {
		copts = append(copts, option.WithAPIKey(key))
	}
	if org := o.Env("OPENAI_ORG_ID"); org != "" {
		copts = append(copts, option.WithOrganization(org))
	}
	if project := o.Env("OPENAI_PROJECT_ID"); project != "" {
		copts = append(copts, option.WithProject(project))
	}
	for line := range strings.SplitSeq(o.Env("OPENAI_CUSTOM_HEADERS"), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) != "" {
			copts = append(copts, option.WithHeader(strings.TrimSpace(name), strings.TrimSpace(value)))
		}
	}
	return copts
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
// when the stream says the turn is complete (a choice with a finish
// reason); a stream that is cut off or ends before that is a transient
// error matching model.ErrStreamCut. An answer cut off at a limit
// (finish_reason "length") is a decision with Cut set.
func (m *Model) Stream(ctx context.Context, req model.Request, onText func(string)) (model.Decision, error) {
	return m.loop().Stream(ctx, req, onText)
}

// loop is a turn of this model: the shared loop, with the chat
// completions API's own pieces.
func (m *Model) loop() call.Loop[sdk.ChatCompletionNewParams, *sdk.ChatCompletion, sdk.ChatCompletionChunk] {
	return call.Loop[sdk.ChatCompletionNewParams, *sdk.ChatCompletion, sdk.ChatCompletionChunk]{
		Endpoint: m.ep,
		Options:  m.opts,
		Params:   m.params,
		Send: func(ctx context.Context, p sdk.ChatCompletionNewParams, mw call.Middleware) (*sdk.ChatCompletion, error) {
			return m.chat.New(ctx, p, option.WithMiddleware(mw))
		},
		Decode: decision,
		Open: func(ctx context.Context, p sdk.ChatCompletionNewParams, mw call.Middleware) call.Events[sdk.ChatCompletionChunk] {
			p.StreamOptions.IncludeUsage = sdk.Bool(true)
			return m.chat.NewStreaming(ctx, p, option.WithMiddleware(mw))
		},
		NewAccumulator: func() call.Accumulator[sdk.ChatCompletionChunk] { return &chunks{} },
		CutOff:         cutOff,
	}
}

// cutOff: finish_reason "length" is an answer stopped at the output
// limit, or at the end of the server's context.
func cutOff(reason string) bool { return reason == "length" }

// params is the request a turn sends.
func (m *Model) params(req model.Request) (sdk.ChatCompletionNewParams, bool, error) {
	p := sdk.ChatCompletionNewParams{Model: shared.ChatModel(m.model)}
	if n := m.opts.MaxTokens; n > 0 || req.MaxTokens > 0 {
		if req.MaxTokens > 0 && (n <= 0 || req.MaxTokens < n) {
			n = req.MaxTokens
		}
		p.MaxCompletionTokens = sdk.Int(n)
	}
	if req.System != "" {
		p.Messages = append(p.Messages, sdk.SystemMessage(req.System))
	}
	for _, msg := range model.Paired(req.Messages) {
		switch msg.Role {
		case facts.RoleUser:
			p.Messages = append(p.Messages, sdk.UserMessage(msg.Text))
		case facts.RoleTool:
			p.Messages = append(p.Messages, sdk.ToolMessage(msg.Text, msg.ToolCallID))
		case facts.RoleAssistant:
			a := &sdk.ChatCompletionAssistantMessageParam{}
			if msg.Text != "" || len(msg.ToolCalls) == 0 {
				a.Content.OfString = param.NewOpt(msg.Text)
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Args},
					},
				})
			}
			p.Messages = append(p.Messages, sdk.ChatCompletionMessageParamUnion{OfAssistant: a})
		default:
			return p, false, fmt.Errorf("openai: message role %q: want user, assistant or tool", msg.Role)
		}
	}
	tools, asks := model.OfferTools(req.Tools, !m.opts.NoAskTool)
	for _, t := range tools {
		schema, err := schemaObject(t)
		if err != nil {
			return p, false, fmt.Errorf("openai: %w", err)
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fd.Description = sdk.String(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(fd))
	}
	return p, asks, nil
}

// schemaObject decodes a tool's JSON Schema; no schema is an object with
// no properties.
func schemaObject(t facts.ToolSchema) (map[string]any, error) {
	if len(t.Schema) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var s map[string]any
	if err := json.Unmarshal(t.Schema, &s); err != nil {
		return nil, fmt.Errorf("tool %q: schema is not a JSON object: %w", t.Name, err)
	}
	return s, nil
}

// decision reads a chat completion.
func decision(res *sdk.ChatCompletion) (model.Decision, error) {
	if res == nil || len(res.Choices) == 0 {
		return model.Decision{}, fmt.Errorf("%w: no choices", call.ErrMalformed)
	}
	msg := res.Choices[0].Message
	d := model.Decision{
		Text:       msg.Content,
		Usage:      usage(res.Usage),
		StopReason: string(res.Choices[0].FinishReason),
	}
	if d.Text == "" {
		d.Text = msg.Refusal
	}
	for _, c := range msg.ToolCalls {
		call := facts.ToolCall{ID: c.ID, Name: c.Function.Name, Args: rawArgs(c.Function.Arguments, c.Function.JSON.Arguments)}
		if c.Type == "custom" {
			call.Name, call.Args = c.Custom.Name, c.Custom.Input
		}
		d.ToolCalls = append(d.ToolCalls, call)
	}
	return d, nil
}

// rawArgs is a call's arguments as the model wrote them: the string, or —
// from a server that sends them as JSON instead of a string holding JSON —
// the JSON's text.
func rawArgs(s string, f respjson.Field) string {
	raw := strings.TrimSpace(f.Raw())
	if raw == "" || raw == respjson.Null || raw[0] == '"' {
		return s
	}
	return raw
}

// chunks accumulates a streamed chat completion.
type chunks struct {
	text     strings.Builder
	calls    []*streamCall
	usage    facts.Usage
	finished bool
	reason   string // the finish reason
}

type streamCall struct {
	index int64
	id    string
	name  string
	args  strings.Builder
}

// Add folds one chunk in.
func (a *chunks) Add(c sdk.ChatCompletionChunk, onText func(string)) {
	if c.Usage.PromptTokens != 0 || c.Usage.CompletionTokens != 0 {
		a.usage = usage(c.Usage)
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // one choice is asked for
		}
		if t := ch.Delta.Content; t != "" {
			a.text.WriteString(t)
			if onText != nil {
				onText(t)
			}
		}
		for _, tc := range ch.Delta.ToolCalls {
			var call *streamCall
			switch {
			case tc.JSON.Index.Valid():
				call = a.find(func(c *streamCall) bool { return c.index == tc.Index })
			case tc.ID != "":
				// A server that leaves out the index: an id names the call.
				call = a.find(func(c *streamCall) bool { return c.id == tc.ID })
			case len(a.calls) > 0:
				// Neither: the call being written goes on.
				call = a.calls[len(a.calls)-1]
			}
			if call == nil {
				idx := tc.Index
				if !tc.JSON.Index.Valid() {
					idx = int64(len(a.calls))
				}
				call = &streamCall{index: idx}
				a.calls = append(a.calls, call)
			}
			if call.id == "" {
				call.id = tc.ID
			}
			if n := tc.Function.Name; n != "" && n != call.name {
				call.name += n
			}
			raw := strings.TrimSpace(tc.Function.JSON.Arguments.Raw())
			if raw != "" && raw != respjson.Null && raw[0] != '"' {
				call.args.Reset()
				call.args.WriteString(raw)
			} else {
				call.args.WriteString(tc.Function.Arguments)
			}
		}
		if ch.FinishReason != "" {
			a.finished, a.reason = true, ch.FinishReason
		}
	}
}

func (a *chunks) find(match func(*streamCall) bool) *streamCall {
	for _, c := range a.calls {
		if match(c) {
			return c
		}
	}
	return nil
}

// Finished reports whether a chunk gave a finish reason.
func (a *chunks) Finished() bool { return a.finished }

// Decision is the turn the chunks made.
func (a *chunks) Decision() model.Decision {
	d := model.Decision{Text: a.text.String(), Usage: a.usage, StopReason: a.reason}
	for _, c := range a.calls {
		d.ToolCalls = append(d.ToolCalls, facts.ToolCall{ID: c.id, Name: c.name, Args: c.args.String()})
	}
	return d
}

// usage is a response's usage: the prompt's tokens (the cached ones among
// them, when the server says) and the completion's.
func usage(u sdk.CompletionUsage) facts.Usage {
	return facts.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CacheReadTokens: u.PromptTokensDetails.CachedTokens}
}
