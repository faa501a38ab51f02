package providertest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

// Provider is one provider's side of the tests: how to open it against a
// fake server, and how its API says things.
type Provider struct {
	// Name is the provider's name on an Exchange ("openai").
	Name string
	// Path is where the API is served ("/v1/chat/completions").
	Path string
	// KeyVar is the variable of the API key, named by a 401's message.
	KeyVar string
	// Open opens the provider against f, with opts after the test's own.
	Open func(t testing.TB, f *Fake, opts ...model.Option) model.Streamer
	// Text is a reply with text only; Calls a reply with text and calls
	// whose arguments are JSON text (each call: id, name, args).
	Text  func(text string) Reply
	Calls func(text string, calls ...[3]string) Reply
	// Stream is a streamed reply: text in pieces and calls; complete false
	// stops before the API says the turn is over.
	Stream   func(pieces []string, complete bool, calls ...[3]string) Reply
	ErrBody  func(typ, msg string) string
	ErrEvent func(typ, msg string) string
	// Cut makes a reply of Text, Calls or Stream one the server stopped at
	// its output limit (finish_reason "length", stop_reason
	// "max_tokens").
	Cut func(r Reply) Reply
	// Overflow is the server's refusal of a conversation longer than the
	// model's context, byte for byte as its servers send it.
	Overflow []Reply
	// Usage is what the replies of Text and Calls report, as a Decision's.
	Usage facts.Usage
	// LastCallAndResult reads a request's last tool call and tool result.
	LastCallAndResult func(t *testing.T, body map[string]any) (callID, resultID, result string)
}

// WriteSchema is the tool the suite's requests offer.
var WriteSchema = facts.ToolSchema{
	Name:        "write_file",
	Description: "Write a file.",
	Schema:      facts.RawJSON(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`),
}

// SimpleRequest is a first turn: a system prompt, one tool, one message.
func SimpleRequest() model.Request {
	return model.Request{Turn: 1, System: "Be careful.", Tools: []facts.ToolSchema{WriteSchema},
		Messages: []facts.Message{{Role: facts.RoleUser, Text: "Set the TTL to 300."}}}
}

// Conversation is a thread's conversation after two tool calls, a person's
// message posted while they waited, and their results.
func Conversation() model.Request {
	return model.Request{Turn: 2, System: "Be careful.", Tools: []facts.ToolSchema{WriteSchema, {Name: "list_files"}},
		Messages: []facts.Message{
			{Role: facts.RoleUser, Text: "Set the TTL to 300."},
			{Role: facts.RoleAssistant, Text: "Writing both.", ToolCalls: []facts.ToolCall{
				{ID: "call_1", Name: "write_file", Args: `{"path":"a.toml","content":"ttl = 300"}`},
				{ID: "call-2'", Name: "write_file", Args: `{"path": "b.toml"`},
			}},
			{Role: facts.RoleUser, Text: "And keep comments."},
			{Role: facts.RoleTool, ToolCallID: "call_1", Text: "succeeded"},
			{Role: facts.RoleTool, ToolCallID: "call-2'", Text: "the arguments are not valid JSON"},
		}}
}

// Run runs the suite every provider passes, each part in parallel.
func Run(t *testing.T, p Provider) {
	for _, part := range []struct {
		name string
		run  func(t *testing.T, p Provider)
	}{
		{"Decisions", decisions},
		{"Errors", errorClasses},
		{"ErrorsWithoutAServer", errorsWithoutAServer},
		{"Stream", stream},
		{"AskToolOffered", askToolOffered},
		{"RetryAfter", retryAfter},
		{"CutOff", cutOff},
		{"ContextOverflow", contextOverflow},
		{"StreamStalls", streamStalls},
	} {
		t.Run(part.name, func(t *testing.T) {
			t.Parallel()
			part.run(t, p)
		})
	}
}

// CheckDecision asserts that a turn answered with reply is want (with the
// provider's usage), and that the exchange kept is the one that happened.
func CheckDecision(t *testing.T, p Provider, reply Reply, want model.Decision) {
	t.Helper()
	f := NewFake(t, p.Path, reply)
	m := p.Open(t, f)
	d, err := m.Turn(context.Background(), SimpleRequest())
	require.NoError(t, err)
	require.NotNil(t, d.Exchange)
	require.Equal(t, f.Requests()[0], d.Exchange.Request, "the request kept is the one sent")
	require.Equal(t, f.Response(0), d.Exchange.Response, "the response kept is the one received")
	require.Equal(t, http.StatusOK, d.Exchange.Status)
	require.Equal(t, p.Name, d.Exchange.Provider)
	require.True(t, strings.HasPrefix(d.Exchange.URL, f.Server.URL), d.Exchange.URL)
	d.Exchange = nil
	require.NotEmpty(t, d.StopReason, "the provider's stop reason is kept")
	d.StopReason = ""
	want.Usage = p.Usage
	require.Equal(t, want, d)
}

func decisions(t *testing.T, p Provider) {
	tests := []struct {
		name  string
		reply Reply
		want  model.Decision
	}{
		{"text", p.Text("All fine."), model.Decision{Text: "All fine."}},
		{"a tool call", p.Calls("Writing.", [3]string{"call_1", "write_file", `{"path":"a.toml","content":"x"}`}),
			model.Decision{Text: "Writing.", ToolCalls: []facts.ToolCall{{ID: "call_1", Name: "write_file", Args: `{"path":"a.toml","content":"x"}`}}}},
		{"two tool calls", p.Calls("", [3]string{"c1", "write_file", `{"path":"a"}`}, [3]string{"c2", "write_file", `{"path":"b"}`}),
			model.Decision{ToolCalls: []facts.ToolCall{{ID: "c1", Name: "write_file", Args: `{"path":"a"}`}, {ID: "c2", Name: "write_file", Args: `{"path":"b"}`}}}},
		{"a missing tool-call id is left to the scheduler", p.Calls("", [3]string{"", "write_file", `{"path":"a"}`}),
			model.Decision{ToolCalls: []facts.ToolCall{{Name: "write_file", Args: `{"path":"a"}`}}}},
		{"ask_person alone is a question", p.Calls("", [3]string{"c1", model.AskTool, `{"text":"Which file?","options":["a.toml","b.toml"]}`}),
			model.Decision{Question: &facts.Question{Text: "Which file?", Options: []string{"a.toml", "b.toml"}}}},
		{"ask_person without options allows free text", p.Calls("Hm.", [3]string{"c1", model.AskTool, `{"text":"Which file?"}`}),
			model.Decision{Text: "Hm.", Question: &facts.Question{Text: "Which file?", AllowFreeText: true}}},
		{"ask_person with other calls is a call", p.Calls("", [3]string{"c1", model.AskTool, `{"text":"Sure?"}`}, [3]string{"c2", "write_file", `{}`}),
			model.Decision{ToolCalls: []facts.ToolCall{{ID: "c1", Name: model.AskTool, Args: `{"text":"Sure?"}`}, {ID: "c2", Name: "write_file", Args: `{}`}}}},
		{"ask_person without text is a call", p.Calls("", [3]string{"c1", model.AskTool, `{"options":["a"]}`}),
			model.Decision{ToolCalls: []facts.ToolCall{{ID: "c1", Name: model.AskTool, Args: `{"options":["a"]}`}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { CheckDecision(t, p, tc.reply, tc.want) })
	}
}

func errorClasses(t *testing.T, p Provider) {
	tests := []struct {
		name   string
		reply  Reply
		class  facts.ErrorClass
		says   string
		status int
	}{
		{"429 is transient", Reply{Status: 429, Body: p.ErrBody("rate_limit_error", "slow down")}, facts.ClassTransient, "slow down", 429},
		{"500 is transient", Reply{Status: 500, Body: p.ErrBody("api_error", "boom")}, facts.ClassTransient, "boom", 500},
		{"503 with a text body is transient", Reply{Status: 503, Body: "upstream unavailable", ContentType: "text/plain"}, facts.ClassTransient, "upstream unavailable", 503},
		{"529 overloaded is transient", Reply{Status: 529, Body: p.ErrBody("overloaded_error", "Overloaded")}, facts.ClassTransient, "Overloaded", 529},
		{"401 is permission and names the key", Reply{Status: 401, Body: p.ErrBody("authentication_error", "invalid x-api-key")}, facts.ClassPermission, "check " + p.KeyVar, 401},
		{"403 is permission", Reply{Status: 403, Body: p.ErrBody("permission_error", "no access")}, facts.ClassPermission, "check " + p.KeyVar, 403},
		{"404 is not_found and names the model", Reply{Status: 404, Body: `{"error":"model not found"}`}, facts.ClassNotFound, "model not found; check the model name", 404},
		{"400 is business", Reply{Status: 400, Body: p.ErrBody("invalid_request_error", "messages: too long")}, facts.ClassBusiness, "messages: too long", 400},
		{"malformed JSON is invalid_output", Reply{Body: `{"id": "x", "choices": [`}, facts.ClassInvalidOutput, "not a valid", 200},
		{"JSON of another shape is invalid_output", Reply{Body: `{"hello": "world"}`}, facts.ClassInvalidOutput, "not a valid", 200},
		{"a connection cut before the response is transient", Reply{Abort: true}, facts.ClassTransient, "the connection failed", 0},
		// A server that dies mid-body: the length it promised never comes.
		{"a body cut mid-JSON is transient", Reply{Body: `{"id": "x", "choi`, Header: http.Header{"Content-Length": {"4000"}}}, facts.ClassTransient, "was cut off", 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFake(t, p.Path, tc.reply)
			m := p.Open(t, f)
			d, err := m.Turn(context.Background(), SimpleRequest())
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
			require.Equal(t, f.Requests()[0], ex.Request)
			require.Len(t, f.Requests(), 1, "the SDK does not retry")
			_, asked := model.RetryAfter(err)
			require.False(t, asked, "no Retry-After was sent")
		})
	}
}

func errorsWithoutAServer(t *testing.T, p Provider) {
	t.Run("connection refused is transient", func(t *testing.T) {
		f := NewFake(t, p.Path, p.Text("never"))
		m := p.Open(t, f)
		f.Server.Close()
		_, err := m.Turn(context.Background(), SimpleRequest())
		class, _ := model.Classify(err)
		require.Equal(t, facts.ClassTransient, class, "%v", err)
		require.Contains(t, err.Error(), "is the server running?")
	})
	t.Run("a call past its timeout is timeout", func(t *testing.T) {
		f := NewFake(t, p.Path, Reply{Delay: 5 * time.Second, Body: "{}"})
		m := p.Open(t, f, model.WithTimeout(50*time.Millisecond))
		_, err := m.Turn(context.Background(), SimpleRequest())
		class, _ := model.Classify(err)
		require.Equal(t, facts.ClassTimeout, class, "%v", err)
	})
	t.Run("a cancelled call is cancelled", func(t *testing.T) {
		f := NewFake(t, p.Path, Reply{Delay: 5 * time.Second, Body: "{}"})
		m := p.Open(t, f)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := m.Turn(ctx, SimpleRequest())
		class, _ := model.Classify(err)
		require.Equal(t, facts.ClassCancelled, class, "%v", err)
		require.ErrorIs(t, err, context.Canceled)
	})
}

func stream(t *testing.T, p Provider) {
	t.Run("text arrives in pieces; the decision when complete", func(t *testing.T) {
		f := NewFake(t, p.Path, p.Stream([]string{"The TTL ", "is ", "fine."}, true))
		m := p.Open(t, f)
		var got []string
		d, err := m.Stream(context.Background(), SimpleRequest(), func(s string) { got = append(got, s) })
		require.NoError(t, err)
		require.Equal(t, []string{"The TTL ", "is ", "fine."}, got)
		require.Equal(t, "The TTL is fine.", d.Text)
		require.NotZero(t, d.Usage.InputTokens)
		require.NotZero(t, d.Usage.OutputTokens)
		require.Equal(t, f.Response(0), d.Exchange.Response, "the raw events are kept")
		require.Equal(t, f.Requests()[0], d.Exchange.Request)
		require.Equal(t, true, f.Request(t, 0)["stream"])
	})
	t.Run("tool calls are assembled from pieces", func(t *testing.T) {
		f := NewFake(t, p.Path, p.Stream([]string{"Writing."}, true,
			[3]string{"call_1", "write_file", `{"path":"a.toml","content":"ttl = 300"}`},
			[3]string{"call_2", "write_file", `{"path": "b.toml"`}))
		m := p.Open(t, f)
		d, err := m.Stream(context.Background(), SimpleRequest(), nil)
		require.NoError(t, err)
		require.Equal(t, "Writing.", d.Text)
		require.Equal(t, []facts.ToolCall{
			{ID: "call_1", Name: "write_file", Args: `{"path":"a.toml","content":"ttl = 300"}`},
			{ID: "call_2", Name: "write_file", Args: `{"path": "b.toml"`},
		}, d.ToolCalls, "malformed arguments are kept as written")
	})
	t.Run("a question streams too", func(t *testing.T) {
		f := NewFake(t, p.Path, p.Stream(nil, true, [3]string{"call_1", model.AskTool, `{"text":"Which file?","options":["a","b"],"allow_free_text":true}`}))
		d, err := p.Open(t, f).Stream(context.Background(), SimpleRequest(), nil)
		require.NoError(t, err)
		require.Equal(t, &facts.Question{Text: "Which file?", Options: []string{"a", "b"}, AllowFreeText: true}, d.Question)
		require.Empty(t, d.ToolCalls)
	})
	t.Run("WithStream makes Turn stream", func(t *testing.T) {
		f := NewFake(t, p.Path, p.Stream([]string{"a", "b"}, true))
		var got strings.Builder
		d, err := p.Open(t, f, model.WithStream(func(s string) { got.WriteString(s) })).Turn(context.Background(), SimpleRequest())
		require.NoError(t, err)
		require.Equal(t, "ab", d.Text)
		require.Equal(t, "ab", got.String())
	})
	failures := []struct {
		name  string
		reply Reply
		class facts.ErrorClass
		cut   bool // the error matches model.ErrStreamCut
	}{
		// A model turn changes nothing in the world and nothing of a cut
		// stream is recorded: the turn is tried again, like a 429.
		{"a stream that ends early is transient", p.Stream([]string{"The TTL "}, false), facts.ClassTransient, true},
		{"a stream cut off is transient", func() Reply { r := p.Stream([]string{"The TTL "}, false); r.Abort = true; return r }(), facts.ClassTransient, true},
		{"an overloaded error event is transient", func() Reply {
			r := p.Stream([]string{"The TTL "}, false)
			r.Events = append(r.Events, p.ErrEvent("overloaded_error", "Overloaded"))
			return r
		}(), facts.ClassTransient, false},
		{"an invalid_request error event is business", func() Reply {
			r := p.Stream(nil, false)
			r.Events = append(r.Events, p.ErrEvent("invalid_request_error", "no"))
			return r
		}(), facts.ClassBusiness, false},
		{"an event that is not JSON is invalid_output", func() Reply {
			r := p.Stream([]string{"x"}, false)
			r.Events = append(r.Events, "event: content_block_delta\ndata: {not json")
			return r
		}(), facts.ClassInvalidOutput, false},
		{"a 429 before the stream is transient", Reply{Status: 429, Body: p.ErrBody("rate_limit_error", "slow down")}, facts.ClassTransient, false},
	}
	for _, tc := range failures {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFake(t, p.Path, tc.reply)
			var got []string
			d, err := p.Open(t, f).Stream(context.Background(), SimpleRequest(), func(s string) { got = append(got, s) })
			require.Error(t, err)
			require.Zero(t, d, "an interrupted stream returns nothing but the error")
			class, _ := model.Classify(err)
			require.Equal(t, tc.class, class, "%v", err)
			require.Equal(t, tc.cut, errors.Is(err, model.ErrStreamCut), "%v", err)
			if tc.cut {
				require.Equal(t, "the stream from "+p.Name+" was cut off", model.Reason(err))
			}
			ex := model.ExchangeOf(err)
			require.NotNil(t, ex)
			require.Equal(t, f.Requests()[0], ex.Request)
		})
	}
}

func askToolOffered(t *testing.T, p Provider) {
	names := func(body map[string]any) []string {
		var out []string
		for _, tl := range body["tools"].([]any) {
			m := tl.(map[string]any)
			if fn, ok := m["function"].(map[string]any); ok {
				m = fn
			}
			out = append(out, m["name"].(string))
		}
		return out
	}
	tests := []struct {
		name  string
		tools []facts.ToolSchema
		opts  []model.Option
		want  []string
	}{
		{"offered after the actor's tools", []facts.ToolSchema{WriteSchema}, nil, []string{"write_file", model.AskTool}},
		{"offered alone", nil, nil, []string{model.AskTool}},
		{"not offered WithoutAskTool", []facts.ToolSchema{WriteSchema}, []model.Option{model.WithoutAskTool()}, []string{"write_file"}},
		{"an actor's own ask_person wins", []facts.ToolSchema{{Name: model.AskTool}}, nil, []string{model.AskTool}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFake(t, p.Path, p.Calls("", [3]string{"c1", model.AskTool, `{"text":"Which?"}`}))
			req := SimpleRequest()
			req.Tools = tc.tools
			d, err := p.Open(t, f, tc.opts...).Turn(context.Background(), req)
			require.NoError(t, err)
			require.Equal(t, tc.want, names(f.Request(t, 0)))
			offered := tc.name == "offered after the actor's tools" || tc.name == "offered alone"
			require.Equal(t, offered, d.Question != nil, "a call is a question only when the pseudo-tool was offered")
		})
	}
}

// retryAfter: the wait a server asks for comes with the error, in each of
// its forms; nothing here waits.
func retryAfter(t *testing.T, p Provider) {
	date := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	limited := func(status int, h ...string) Reply {
		r := Reply{Status: status, Body: p.ErrBody("rate_limit_error", "slow down"), Header: http.Header{}}
		for i := 0; i+1 < len(h); i += 2 {
			r.Header.Set(h[i], h[i+1])
		}
		return r
	}
	tests := []struct {
		name   string
		reply  Reply
		stream bool
		wait   time.Duration // 0: none asked
		reason string
	}{
		{"Retry-After in seconds", limited(429, "Retry-After", "5"), false, 5 * time.Second, "rate limited by " + p.Name + " (429)"},
		{"retry-after-ms, as OpenAI sends it, wins over Retry-After", limited(429, "Retry-After-Ms", "1500", "Retry-After", "2"), false, 1500 * time.Millisecond, ""},
		{"an HTTP date, read against the server's Date", limited(429, "Date", date.Format(http.TimeFormat), "Retry-After", date.Add(7*time.Second).Format(http.TimeFormat)), false, 7 * time.Second, ""},
		{"an HTTP date in the past asks no wait", limited(429, "Date", date.Format(http.TimeFormat), "Retry-After", date.Add(-time.Minute).Format(http.TimeFormat)), false, 0, ""},
		{"a value that is no wait asks none", limited(429, "Retry-After", "soon"), false, 0, ""},
		{"a negative value asks none", limited(429, "Retry-After", "-3"), false, 0, ""},
		{"a 503 with Retry-After", limited(503, "Retry-After", "3"), false, 3 * time.Second, p.Name + " is unavailable (503)"},
		{"a 529 with Retry-After", limited(529, "Retry-After", "4"), false, 4 * time.Second, p.Name + " is overloaded (529)"},
		{"a 429 before a stream", limited(429, "Retry-After", "2"), true, 2 * time.Second, "rate limited by " + p.Name + " (429)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFake(t, p.Path, tc.reply)
			m := p.Open(t, f)
			var err error
			if tc.stream {
				_, err = m.Stream(context.Background(), SimpleRequest(), nil)
			} else {
				_, err = m.Turn(context.Background(), SimpleRequest())
			}
			require.True(t, model.IsTransient(err), "%v", err)
			wait, asked := model.RetryAfter(err)
			require.Equal(t, tc.wait != 0, asked, "%v", err)
			require.Equal(t, tc.wait, wait)
			if tc.reason != "" {
				require.Equal(t, tc.reason, model.Reason(err))
			}
			require.Len(t, f.Requests(), 1, "the SDK does not wait and retry by itself")
		})
	}
}

// EnvCase is an environment a provider is opened in, and the
// Authorization header the server then sees.
type EnvCase struct {
	Name string
	Env  func(f *Fake) map[string]string
	Opts func(f *Fake) []model.Option
	Auth string
}

// Environment checks that the variables a user sets are the ones used, an
// option wins over a variable, and a local server needs no key: open is
// the provider's constructor with a model name given.
func Environment(t *testing.T, p Provider, open func(opts ...model.Option) (model.Model, error), cases []EnvCase) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			f := NewFake(t, p.Path, p.Text("hi"))
			// The SDKs read the process environment too: set it, so the
			// test sees what a user would.
			for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"} {
				t.Setenv(k, "")
			}
			for k, v := range tc.Env(f) {
				t.Setenv(k, v)
			}
			var opts []model.Option
			if tc.Opts != nil {
				opts = tc.Opts(f)
			}
			m, err := open(opts...)
			require.NoError(t, err)
			d, err := m.Turn(context.Background(), SimpleRequest())
			require.NoError(t, err)
			require.Equal(t, "hi", d.Text)
			require.Equal(t, tc.Auth, f.Header(0).Get("Authorization"))
		})
	}
}

// cutOff: an answer the server stopped at its limit — text, or a tool
// call cut mid-arguments, streamed or not — is a decision marked cut: its
// text kept, the calls that had begun named in Cut and not returned as
// calls (nothing acts on incomplete arguments), the stop reason and the
// exchange kept.
func cutOff(t *testing.T, p Provider) {
	const cut = `{"path":"cache.toml","content":"ttl_sec`
	tests := []struct {
		name  string
		reply Reply
		text  string
		calls []string
	}{
		{"text", p.Cut(p.Text("The TTL is set in cache.toml, under")), "The TTL is set in cache.toml, under", nil},
		// Not streamed, Anthropic's API sends the input it could parse:
		// a valid object, missing what was cut.
		{"tool call", p.Cut(p.Calls("", [3]string{"call_1", "write_file", `{"path":"cache.toml"}`})), "", []string{"write_file"}},
		{"streamed text", p.Cut(p.Stream([]string{"The TTL ", "is set in"}, true)), "The TTL is set in", nil},
		{"streamed tool call", p.Cut(p.Stream([]string{"Writing."}, true, [3]string{"call_1", "write_file", cut})), "Writing.", []string{"write_file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFake(t, p.Path, tc.reply)
			var opts []model.Option
			if len(tc.reply.Events) > 0 {
				opts = append(opts, model.WithStream(func(string) {}))
			}
			d, err := p.Open(t, f, opts...).Turn(context.Background(), SimpleRequest())
			require.NoError(t, err)
			require.NotNil(t, d.Cut, "a cut answer is marked cut: %+v", d)
			require.NoError(t, d.Validate())
			require.Equal(t, tc.text, d.Text)
			require.Equal(t, tc.calls, d.Cut.Calls)
			require.Empty(t, d.ToolCalls, "a call cut mid-arguments is never returned to act on")
			require.Nil(t, d.Question)
			require.NotEmpty(t, d.StopReason)
			require.NotNil(t, d.Exchange, "the cut answer's exchange is kept")
			// A client that read to the end of the stream may be done
			// before the server's handler has returned.
			require.Eventually(t, func() bool { return f.Responded() > 0 }, 10*time.Second, 5*time.Millisecond)
			require.Equal(t, f.Response(0), d.Exchange.Response)
		})
	}
}

// contextOverflow: a server's refusal of a conversation longer than its
// context has class context_overflow and matches model.ErrContextOverflow,
// streamed or not; a 400 that says something else stays business.
func contextOverflow(t *testing.T, p Provider) {
	require.NotEmpty(t, p.Overflow)
	for i, reply := range p.Overflow {
		for _, streamed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d streamed=%v", i, streamed), func(t *testing.T) {
				f := NewFake(t, p.Path, reply)
				var opts []model.Option
				if streamed {
					opts = append(opts, model.WithStream(func(string) {}))
				}
				_, err := p.Open(t, f, opts...).Turn(context.Background(), SimpleRequest())
				require.ErrorIs(t, err, model.ErrContextOverflow)
				class, _ := model.Classify(err)
				require.Equal(t, facts.ClassContextOverflow, class)
				require.Contains(t, model.Reason(err), "context size")
				require.Len(t, f.Requests(), 1, "the provider does not retry it itself")
			})
		}
	}
	f := NewFake(t, p.Path, Reply{Status: 400, Body: p.ErrBody("invalid_request_error", "tools: too many")})
	_, err := p.Open(t, f).Turn(context.Background(), SimpleRequest())
	require.NotErrorIs(t, err, model.ErrContextOverflow)
}

// streamStalls: a stream that stops sending without closing is cut off
// once nothing came for the idle bound: transient, the turn runs again.
func streamStalls(t *testing.T, p Provider) {
	stall := p.Stream([]string{"The TTL "}, false)
	stall.Stall = time.Minute
	f := NewFake(t, p.Path, stall)
	start := time.Now()
	_, err := p.Open(t, f, model.WithStream(func(string) {}), model.WithStreamIdle(200*time.Millisecond)).
		Turn(context.Background(), SimpleRequest())
	require.Less(t, time.Since(start), 30*time.Second, "the stall is not waited out")
	require.ErrorIs(t, err, model.ErrStreamCut)
	require.True(t, model.IsTransient(err), "%v", err)
	require.Contains(t, err.Error(), "nothing came for 200ms")
}
