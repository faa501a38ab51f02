package mcp

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

// Sampling: a server the settings allow it (Server.Sampling) is declared
// sampling (without tools or context), and its sampling/createMessage
// during a call of one of its tools runs a turn of the thread's model
// through the action's action.Sample — the runtime budgets it, records
// it (model.sampled) and counts it. What the server sends is bounded here:
// text messages only (user and assistant), at most MaxSampleMessages and
// MaxSampleBytes with the system prompt, the answer's tokens capped by
// the settings (SamplingMaxTokens), at most SamplingPerCall turns a call,
// one at a time. A request with tools is refused: the model is offered
// none, and its answer carries none back. includeContext is recorded and
// not honoured: the thread's conversation is never sent. A server not
// allowed, or one that asks outside a call, or where no model turn can be
// run, is refused with an error that says why.

// The bounds of sampling.
const (
	// MaxSampleMessages and MaxSampleBytes bound a request: its messages,
	// and the bytes of their text with the system prompt.
	MaxSampleMessages = 100
	MaxSampleBytes    = 256 << 10
	// DefaultSamplingMaxTokens and MaxSamplingMaxTokens: the answer's cap
	// when the settings give none, and the most they may give.
	DefaultSamplingMaxTokens = 1024
	MaxSamplingMaxTokens     = 32 << 10
	// DefaultSamplingPerCall and MaxSamplingPerCall: the turns a call may
	// take when the settings say nothing, and the most they may say.
	DefaultSamplingPerCall = 3
	MaxSamplingPerCall     = 50
)

// methodSampling is the method of a server's request for a model turn.
const methodSampling = "sampling/createMessage"

// codeRejected is the error code of a refused request for a model turn,
// as the specification's example of a rejected sampling request gives it.
const codeRejected = -1

// refuseSampling is the client's receiving middleware that answers a
// server's request for a model turn with the refusal when the settings do
// not allow it, or when it offers the model tools.
func (s *conn) refuseSampling(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != methodSampling {
			return next(ctx, method, req)
		}
		if !s.cfg.Sampling {
			return nil, &jsonrpc.Error{Code: codeRejected, Message: s.samplingRefusal()}
		}
		if p, ok := req.GetParams().(*sdk.CreateMessageWithToolsParams); ok && (len(p.Tools) > 0 || p.ToolChoice != nil) {
			return nil, &jsonrpc.Error{Code: codeRejected, Message: "harness refuses sampling with tools: a sampling turn offers the model none, and its answer carries no tool call"}
		}
		return next(ctx, method, req)
	}
}

// samplingRefusal says why the server's request for a model turn is
// refused.
func (s *conn) samplingRefusal() string {
	return fmt.Sprintf("harness refuses sampling: the MCP server %q is not allowed a model turn; a person allows it with \"sampling\": true in the server's entry of their own settings or of a project file they trusted", s.name)
}

// maxTokens is the cap of a sampling turn's answer.
func (s *conn) maxTokens() int64 {
	if n := s.cfg.SamplingMaxTokens; n > 0 {
		return min(n, MaxSamplingMaxTokens)
	}
	return DefaultSamplingMaxTokens
}

// perCall is the most sampling turns a call may take.
func (s *conn) perCall() int {
	if n := s.cfg.SamplingPerCall; n > 0 {
		return min(n, MaxSamplingPerCall)
	}
	return DefaultSamplingPerCall
}

// sample is the client's sampling handler (set only for a server the
// settings allow).
func (s *conn) sample(_ context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
	refuse := func(format string, args ...any) (*sdk.CreateMessageResult, error) {
		return nil, &jsonrpc.Error{Code: codeRejected, Message: "harness refuses sampling: " + fmt.Sprintf(format, args...)}
	}
	p := req.Params
	if p == nil {
		return refuse("no parameters")
	}
	if len(p.Messages) == 0 || len(p.Messages) > MaxSampleMessages {
		return refuse("%d messages: a request holds 1 to %d", len(p.Messages), MaxSampleMessages)
	}
	size := len(p.SystemPrompt)
	if size > facts.MaxSampledSystem || !utf8.ValidString(p.SystemPrompt) {
		return refuse("the system prompt is over %d bytes or not UTF-8", facts.MaxSampledSystem)
	}
	msgs := make([]facts.Message, 0, len(p.Messages))
	for i, m := range p.Messages {
		if m == nil {
			return refuse("message %d is null", i+1)
		}
		var role facts.Role
		switch m.Role {
		case "user":
			role = facts.RoleUser
		case "assistant":
			role = facts.RoleAssistant
		default:
			return refuse("message %d: role %q is not user or assistant", i+1, serverWord(string(m.Role), 40))
		}
		t, ok := m.Content.(*sdk.TextContent)
		if !ok {
			return refuse("message %d: only text is sampled here, not %T", i+1, m.Content)
		}
		if !utf8.ValidString(t.Text) {
			return refuse("message %d is not UTF-8", i+1)
		}
		size += len(t.Text)
		if size > MaxSampleBytes {
			return refuse("the messages and system prompt are over %d bytes", MaxSampleBytes)
		}
		msgs = append(msgs, facts.Message{Role: role, Text: t.Text})
	}
	if p.MaxTokens <= 0 {
		return refuse("maxTokens %d: a request bounds its answer", p.MaxTokens)
	}
	call, why := s.calls.only()
	if call == nil {
		return refuse("%s", why)
	}
	if call.sample == nil {
		return refuse("no model turn can be run where this call runs")
	}
	if !s.calls.startSample(call, s.perCall()) {
		return refuse("this call has taken the %d sampling turns the settings allow a call of %q", s.perCall(), s.name)
	}
	defer call.sampling.Done()
	ctx, cancel := context.WithCancel(call.ctx)
	defer cancel()
	defer context.AfterFunc(s.life, cancel)()
	resume := call.pause()
	res, err := call.sample(ctx, action.SampleRequest{ActionID: call.actionID, Server: s.name, System: p.SystemPrompt,
		Messages: msgs, MaxTokens: min(p.MaxTokens, s.maxTokens()), AskedMaxTokens: p.MaxTokens,
		IncludeContext: serverWord(p.IncludeContext, 40)})
	resume()
	if err != nil {
		return refuse("%v", err)
	}
	stop := "endTurn"
	if res.Cut {
		stop = "maxTokens"
	}
	return &sdk.CreateMessageResult{Content: &sdk.TextContent{Text: res.Text}, Model: res.Model, Role: "assistant", StopReason: stop}, nil
}
