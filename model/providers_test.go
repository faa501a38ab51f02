package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

// provider is one provider's side of the tests: how to open it against a
// fake server, and how that API says things.
type provider struct {
	name   string
	path   string
	keyVar string
	open   func(t testing.TB, f *fake, opts ...model.Option) model.Streamer
	// text is a reply with text only; calls a reply with text and calls
	// whose arguments are JSON text (each call: id, name, args).
	text  func(text string) reply
	calls func(text string, calls ...[3]string) reply
	// stream is a streamed reply: text in pieces and calls; complete false
	// stops before the API says the turn is over.
	stream   func(pieces []string, complete bool, calls ...[3]string) reply
	errBody  func(typ, msg string) string
	errEvent func(typ, msg string) string
}

var providers = []provider{
	{
		name: "openai", path: "/v1/chat/completions", keyVar: "OPENAI_API_KEY",
		open: func(t testing.TB, f *fake, opts ...model.Option) model.Streamer {
			m, err := model.NewOpenAI("gpt-test", append([]model.Option{
				model.WithBaseURL(f.srv.URL + "/v1"), model.WithAPIKey("test-key"), model.WithHTTPClient(f.srv.Client()),
			}, opts...)...)
			require.NoError(t, err)
			return m
		},
		text: func(text string) reply { return reply{body: oaCompletion(text)} },
		calls: func(text string, calls ...[3]string) reply {
			var cs []oaCall
			for _, c := range calls {
				cs = append(cs, oaCall{id: c[0], name: c[1], args: c[2]})
			}
			return reply{body: oaCompletion(text, cs...)}
		},
		stream: func(pieces []string, complete bool, calls ...[3]string) reply {
			var cs []oaCall
			for _, c := range calls {
				cs = append(cs, oaCall{id: c[0], name: c[1], args: c[2]})
			}
			return reply{events: oaStream(pieces, cs, complete)}
		},
		errBody: oaError,
		errEvent: func(typ, msg string) string {
			return sse("", map[string]any{"error": map[string]any{"type": typ, "message": msg}})
		},
	},
	{
		name: "anthropic", path: "/v1/messages", keyVar: "ANTHROPIC_API_KEY",
		open: func(t testing.TB, f *fake, opts ...model.Option) model.Streamer {
			m, err := model.NewAnthropic("claude-test", append([]model.Option{
				model.WithBaseURL(f.srv.URL), model.WithAPIKey("test-key"), model.WithHTTPClient(f.srv.Client()),
			}, opts...)...)
			require.NoError(t, err)
			return m
		},
		text: func(text string) reply { return reply{body: anMessage(text)} },
		calls: func(text string, calls ...[3]string) reply {
			var cs []anCall
			for _, c := range calls {
				cs = append(cs, anCall{id: c[0], name: c[1], input: json.RawMessage(c[2])})
			}
			return reply{body: anMessage(text, cs...)}
		},
		stream: func(pieces []string, complete bool, calls ...[3]string) reply {
			var cs []anCall
			for _, c := range calls {
				cs = append(cs, anCall{id: c[0], name: c[1], input: c[2]})
			}
			return reply{events: anStream(pieces, cs, complete)}
		},
		errBody:  anError,
		errEvent: func(typ, msg string) string { return "event: error\ndata: " + anError(typ, msg) },
	},
}

func forEach(t *testing.T, f func(t *testing.T, p provider)) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			f(t, p)
		})
	}
}

var writeSchema = facts.ToolSchema{
	Name:        "write_file",
	Description: "Write a file.",
	Schema:      facts.RawJSON(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`),
}

func simpleRequest() model.Request {
	return model.Request{Turn: 1, System: "Be careful.", Tools: []facts.ToolSchema{writeSchema},
		Messages: []facts.Message{{Role: facts.RoleUser, Text: "Set the TTL to 300."}}}
}

func TestDecisions(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		usage := map[string]facts.Usage{"openai": {InputTokens: 12, OutputTokens: 5}, "anthropic": {InputTokens: 23, OutputTokens: 7}}[p.name]
		tests := []struct {
			name  string
			reply reply
			want  model.Decision
		}{
			{"text", p.text("All fine."), model.Decision{Text: "All fine."}},
			{"a tool call", p.calls("Writing.", [3]string{"call_1", "write_file", `{"path":"a.toml","content":"x"}`}),
				model.Decision{Text: "Writing.", ToolCalls: []facts.ToolCall{{ID: "call_1", Name: "write_file", Args: `{"path":"a.toml","content":"x"}`}}}},
			{"two tool calls", p.calls("", [3]string{"c1", "write_file", `{"path":"a"}`}, [3]string{"c2", "write_file", `{"path":"b"}`}),
				model.Decision{ToolCalls: []facts.ToolCall{{ID: "c1", Name: "write_file", Args: `{"path":"a"}`}, {ID: "c2", Name: "write_file", Args: `{"path":"b"}`}}}},
			{"a missing tool-call id is left to the scheduler", p.calls("", [3]string{"", "write_file", `{"path":"a"}`}),
				model.Decision{ToolCalls: []facts.ToolCall{{Name: "write_file", Args: `{"path":"a"}`}}}},
			{"ask_person alone is a question", p.calls("", [3]string{"c1", model.AskTool, `{"text":"Which file?","options":["a.toml","b.toml"]}`}),
				model.Decision{Question: &facts.Question{Text: "Which file?", Options: []string{"a.toml", "b.toml"}}}},
			{"ask_person without options allows free text", p.calls("Hm.", [3]string{"c1", model.AskTool, `{"text":"Which file?"}`}),
				model.Decision{Text: "Hm.", Question: &facts.Question{Text: "Which file?", AllowFreeText: true}}},
			{"ask_person with other calls is a call", p.calls("", [3]string{"c1", model.AskTool, `{"text":"Sure?"}`}, [3]string{"c2", "write_file", `{}`}),
				model.Decision{ToolCalls: []facts.ToolCall{{ID: "c1", Name: model.AskTool, Args: `{"text":"Sure?"}`}, {ID: "c2", Name: "write_file", Args: `{}`}}}},
			{"ask_person without text is a call", p.calls("", [3]string{"c1", model.AskTool, `{"options":["a"]}`}),
				model.Decision{ToolCalls: []facts.ToolCall{{ID: "c1", Name: model.AskTool, Args: `{"options":["a"]}`}}}},
		}
		if p.name == "openai" {
			tests = append(tests,
				struct {
					name  string
					reply reply
					want  model.Decision
				}{"arguments as a JSON object instead of a string", reply{body: oaCompletion("", oaCall{id: "c1", name: "write_file", args: map[string]any{"path": "a.toml"}})},
					model.Decision{ToolCalls: []facts.ToolCall{{ID: "c1", Name: "write_file", Args: `{"path":"a.toml"}`}}}},
				struct {
					name  string
					reply reply
					want  model.Decision
				}{"malformed arguments are kept as written", reply{body: oaCompletion("", oaCall{id: "c1", name: "write_file", args: `{"path": "a.toml"`})},
					model.Decision{ToolCalls: []facts.ToolCall{{ID: "c1", Name: "write_file", Args: `{"path": "a.toml"`}}}},
			)
		} else {
			tests = append(tests, struct {
				name  string
				reply reply
				want  model.Decision
			}{"input as a string holding JSON instead of an object", reply{body: anMessage("", anCall{id: "c1", name: "write_file", input: `{"path":"a.toml"}`})},
				model.Decision{ToolCalls: []facts.ToolCall{{ID: "c1", Name: "write_file", Args: `{"path":"a.toml"}`}}}})
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				f := newFake(t, p.path, tc.reply)
				m := p.open(t, f)
				d, err := m.Turn(context.Background(), simpleRequest())
				require.NoError(t, err)
				require.NotNil(t, d.Exchange)
				require.Equal(t, f.requests()[0], d.Exchange.Request, "the request kept is the one sent")
				require.Equal(t, f.response(0), d.Exchange.Response, "the response kept is the one received")
				require.Equal(t, http.StatusOK, d.Exchange.Status)
				require.Equal(t, p.name, d.Exchange.Provider)
				require.True(t, strings.HasPrefix(d.Exchange.URL, f.srv.URL), d.Exchange.URL)
				d.Exchange = nil
				tc.want.Usage = usage
				require.Equal(t, tc.want, d)
			})
		}
	})
}

func TestErrors(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		tests := []struct {
			name   string
			reply  reply
			class  facts.ErrorClass
			says   string
			status int
		}{
			{"429 is transient", reply{status: 429, body: p.errBody("rate_limit_error", "slow down")}, facts.ClassTransient, "slow down", 429},
			{"500 is transient", reply{status: 500, body: p.errBody("api_error", "boom")}, facts.ClassTransient, "boom", 500},
			{"503 with a text body is transient", reply{status: 503, body: "upstream unavailable", contentType: "text/plain"}, facts.ClassTransient, "upstream unavailable", 503},
			{"529 overloaded is transient", reply{status: 529, body: p.errBody("overloaded_error", "Overloaded")}, facts.ClassTransient, "Overloaded", 529},
			{"401 is permission and names the key", reply{status: 401, body: p.errBody("authentication_error", "invalid x-api-key")}, facts.ClassPermission, "check " + p.keyVar, 401},
			{"403 is permission", reply{status: 403, body: p.errBody("permission_error", "no access")}, facts.ClassPermission, "check " + p.keyVar, 403},
			{"404 is not_found and names the model", reply{status: 404, body: `{"error":"model not found"}`}, facts.ClassNotFound, "model not found; check the model name", 404},
			{"400 is business", reply{status: 400, body: p.errBody("invalid_request_error", "messages: too long")}, facts.ClassBusiness, "messages: too long", 400},
			{"malformed JSON is invalid_output", reply{body: `{"id": "x", "choices": [`}, facts.ClassInvalidOutput, "not a valid", 200},
			{"JSON of another shape is invalid_output", reply{body: `{"hello": "world"}`}, facts.ClassInvalidOutput, "not a valid", 200},
			{"a connection cut before the response is transport", reply{abort: true}, facts.ClassTransport, "the connection failed", 0},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				f := newFake(t, p.path, tc.reply)
				m := p.open(t, f)
				d, err := m.Turn(context.Background(), simpleRequest())
				require.Error(t, err)
				require.Zero(t, d)
				class, ok := model.Classify(err)
				require.True(t, ok, "%v", err)
				require.Equal(t, tc.class, class, "%v", err)
				require.Equal(t, tc.class == facts.ClassTransient, model.IsTransient(err))
				require.Contains(t, err.Error(), tc.says)
				ex := model.ExchangeOf(err)
				require.NotNil(t, ex)
				require.Equal(t, tc.status, ex.Status)
				require.Equal(t, f.requests()[0], ex.Request)
				require.Len(t, f.requests(), 1, "the SDK does not retry")
			})
		}
	})
}

func TestErrorsWithoutAServer(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		t.Run("connection refused is transport", func(t *testing.T) {
			f := newFake(t, p.path, p.text("never"))
			m := p.open(t, f)
			f.srv.Close()
			_, err := m.Turn(context.Background(), simpleRequest())
			class, _ := model.Classify(err)
			require.Equal(t, facts.ClassTransport, class, "%v", err)
			require.Contains(t, err.Error(), "is the server running?")
		})
		t.Run("a call past its timeout is timeout", func(t *testing.T) {
			f := newFake(t, p.path, reply{delay: 5 * time.Second, body: "{}"})
			m := p.open(t, f, model.WithTimeout(50*time.Millisecond))
			_, err := m.Turn(context.Background(), simpleRequest())
			class, _ := model.Classify(err)
			require.Equal(t, facts.ClassTimeout, class, "%v", err)
		})
		t.Run("a cancelled call is cancelled", func(t *testing.T) {
			f := newFake(t, p.path, reply{delay: 5 * time.Second, body: "{}"})
			m := p.open(t, f)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			_, err := m.Turn(ctx, simpleRequest())
			class, _ := model.Classify(err)
			require.Equal(t, facts.ClassCancelled, class, "%v", err)
			require.ErrorIs(t, err, context.Canceled)
		})
	})
}

func TestStream(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		t.Run("text arrives in pieces; the decision when complete", func(t *testing.T) {
			f := newFake(t, p.path, p.stream([]string{"The TTL ", "is ", "fine."}, true))
			m := p.open(t, f)
			var got []string
			d, err := m.Stream(context.Background(), simpleRequest(), func(s string) { got = append(got, s) })
			require.NoError(t, err)
			require.Equal(t, []string{"The TTL ", "is ", "fine."}, got)
			require.Equal(t, "The TTL is fine.", d.Text)
			require.NotZero(t, d.Usage.InputTokens)
			require.NotZero(t, d.Usage.OutputTokens)
			require.Equal(t, f.response(0), d.Exchange.Response, "the raw events are kept")
			require.Equal(t, f.requests()[0], d.Exchange.Request)
			require.Equal(t, true, f.request(t, 0)["stream"])
		})
		t.Run("tool calls are assembled from pieces", func(t *testing.T) {
			f := newFake(t, p.path, p.stream([]string{"Writing."}, true,
				[3]string{"call_1", "write_file", `{"path":"a.toml","content":"ttl = 300"}`},
				[3]string{"call_2", "write_file", `{"path": "b.toml"`}))
			m := p.open(t, f)
			d, err := m.Stream(context.Background(), simpleRequest(), nil)
			require.NoError(t, err)
			require.Equal(t, "Writing.", d.Text)
			require.Equal(t, []facts.ToolCall{
				{ID: "call_1", Name: "write_file", Args: `{"path":"a.toml","content":"ttl = 300"}`},
				{ID: "call_2", Name: "write_file", Args: `{"path": "b.toml"`},
			}, d.ToolCalls, "malformed arguments are kept as written")
		})
		t.Run("a question streams too", func(t *testing.T) {
			f := newFake(t, p.path, p.stream(nil, true, [3]string{"call_1", model.AskTool, `{"text":"Which file?","options":["a","b"],"allow_free_text":true}`}))
			d, err := p.open(t, f).Stream(context.Background(), simpleRequest(), nil)
			require.NoError(t, err)
			require.Equal(t, &facts.Question{Text: "Which file?", Options: []string{"a", "b"}, AllowFreeText: true}, d.Question)
			require.Empty(t, d.ToolCalls)
		})
		t.Run("WithStream makes Turn stream", func(t *testing.T) {
			f := newFake(t, p.path, p.stream([]string{"a", "b"}, true))
			var got strings.Builder
			d, err := p.open(t, f, model.WithStream(func(s string) { got.WriteString(s) })).Turn(context.Background(), simpleRequest())
			require.NoError(t, err)
			require.Equal(t, "ab", d.Text)
			require.Equal(t, "ab", got.String())
		})
		failures := []struct {
			name  string
			reply reply
			class facts.ErrorClass
		}{
			{"a stream that ends early is transport", p.stream([]string{"The TTL "}, false), facts.ClassTransport},
			{"a stream cut off is transport", func() reply { r := p.stream([]string{"The TTL "}, false); r.abort = true; return r }(), facts.ClassTransport},
			{"an overloaded error event is transient", func() reply {
				r := p.stream([]string{"The TTL "}, false)
				r.events = append(r.events, p.errEvent("overloaded_error", "Overloaded"))
				return r
			}(), facts.ClassTransient},
			{"an invalid_request error event is business", func() reply {
				r := p.stream(nil, false)
				r.events = append(r.events, p.errEvent("invalid_request_error", "no"))
				return r
			}(), facts.ClassBusiness},
			{"an event that is not JSON is invalid_output", func() reply {
				r := p.stream([]string{"x"}, false)
				r.events = append(r.events, "event: content_block_delta\ndata: {not json")
				return r
			}(), facts.ClassInvalidOutput},
			{"a 429 before the stream is transient", reply{status: 429, body: p.errBody("rate_limit_error", "slow down")}, facts.ClassTransient},
		}
		for _, tc := range failures {
			t.Run(tc.name, func(t *testing.T) {
				f := newFake(t, p.path, tc.reply)
				var got []string
				d, err := p.open(t, f).Stream(context.Background(), simpleRequest(), func(s string) { got = append(got, s) })
				require.Error(t, err)
				require.Zero(t, d, "an interrupted stream returns nothing but the error")
				class, _ := model.Classify(err)
				require.Equal(t, tc.class, class, "%v", err)
				ex := model.ExchangeOf(err)
				require.NotNil(t, ex)
				require.Equal(t, f.requests()[0], ex.Request)
			})
		}
	})
}

func TestExchangeSurvivesAsError(t *testing.T) {
	var ce *model.CallError
	err := error(&model.Error{Class: facts.ClassTransient, Err: &model.CallError{Provider: "openai", Status: 429, Message: "slow down"}})
	require.True(t, errors.As(err, &ce))
	require.Equal(t, "model: transient: openai: 429 Too Many Requests: slow down", err.Error())
	require.Nil(t, model.ExchangeOf(errors.New("other")))
}

// TestOpenAIStreamQuirks: what OpenAI-compatible servers send in streams
// that OpenAI does not — a whole call in one chunk with its arguments as a
// JSON object, tool calls without an index.
func TestOpenAIStreamQuirks(t *testing.T) {
	chunk := func(delta map[string]any, reason any) string {
		return sse("", map[string]any{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": reason}}})
	}
	f := newFake(t, providers[0].path, reply{events: []string{
		chunk(map[string]any{"tool_calls": []any{
			map[string]any{"id": "a", "type": "function", "function": map[string]any{"name": "write_file", "arguments": map[string]any{"path": "a.toml"}}},
			map[string]any{"id": "b", "type": "function", "function": map[string]any{"name": "write_file", "arguments": `{"path":`}},
		}}, nil),
		chunk(map[string]any{"tool_calls": []any{
			map[string]any{"function": map[string]any{"arguments": `"b.toml"}`}},
		}}, nil),
		chunk(map[string]any{"tool_calls": []any{
			map[string]any{"function": map[string]any{"arguments": ``}},
			map[string]any{"function": map[string]any{"arguments": ``}},
		}}, "tool_calls"),
		"data: [DONE]",
	}})
	d, err := providers[0].open(t, f).Stream(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	require.Equal(t, []facts.ToolCall{
		{ID: "a", Name: "write_file", Args: `{"path":"a.toml"}`},
		{ID: "b", Name: "write_file", Args: `{"path":"b.toml"}`},
	}, d.ToolCalls)
}
