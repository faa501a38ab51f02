package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/openai"
	"github.com/seed-7cc7a084/harness/thread"
)

// provider is an OpenAI-compatible chat completions server for a scripted
// session: turn N reads fN (read_file), until the last turn says it is
// done. It reads where the session is from the conversation it is sent —
// the highest "read fK" in it — so a turn sent again gets the same answer.
// A request whose system prompt is harness.CompactPrompt is a compaction
// turn: it is answered with a summary. Every answer reports usage: the
// request's size in tokens (four bytes a token) in, the answer's out.
type provider struct {
	turns int
	// onSummary, when set, is called with each compaction request before
	// it is answered; it may block (until the request is given up, say).
	onSummary func(r *http.Request, body []byte)

	mu   sync.Mutex
	sent []sent
}

// sent is one request the provider answered, or was given up on.
type sent struct {
	summary bool
	step    int // the step the request asks for (a normal turn)
	tokens  int64
	body    []byte
}

var readMark = regexp.MustCompile(`read f(\d+)\b`)

func (p *provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var system string
	_ = json.Unmarshal(req.Messages[0].Content, &system)
	in := int64(len(body) / 4)
	s := sent{summary: system == harness.CompactPrompt, tokens: in, body: body}
	var msg map[string]any
	finish := "stop"
	if s.summary {
		if p.onSummary != nil {
			p.onSummary(r, body)
			if r.Context().Err() != nil {
				p.record(s)
				return
			}
		}
		done := 0
		for _, m := range readMark.FindAllSubmatch(body, -1) {
			n, _ := strconv.Atoi(string(m[1]))
			done = max(done, n)
		}
		msg = map[string]any{"role": "assistant", "content": fmt.Sprintf("The user asked to read every file in turn. Files f1 to f%d were read; each said it was read. Next: f%d.", done, done+1)}
	} else {
		done := 0
		for _, m := range readMark.FindAllSubmatch(body, -1) {
			n, _ := strconv.Atoi(string(m[1]))
			done = max(done, n)
		}
		s.step = done + 1
		if s.step >= p.turns {
			msg = map[string]any{"role": "assistant", "content": fmt.Sprintf("Done: read f1 to f%d.", done)}
		} else {
			finish = "tool_calls"
			msg = map[string]any{"role": "assistant", "content": fmt.Sprintf("Reading f%d.", s.step), "tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function",
				"function": map[string]any{"name": "read_file", "arguments": fmt.Sprintf(`{"path":"f%d"}`, s.step)},
			}}}
		}
	}
	out, _ := json.Marshal(msg)
	p.record(s)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":0,"model":"fake","choices":[{"index":0,"message":%s,"finish_reason":%q}],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		out, finish, in, len(out)/4, in+int64(len(out)/4))
}

func (p *provider) record(s sent) {
	p.mu.Lock()
	p.sent = append(p.sent, s)
	p.mu.Unlock()
}

// requests returns the requests answered (or given up on) so far.
func (p *provider) requests() []sent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]sent(nil), p.sent...)
}

// sessionFile is what read_file returns of fN: its mark, and enough lines
// that a long session fills a window.
func sessionFile(path string) string {
	return "read " + path + "\n" + strings.Repeat("// a line of the file, as a model would be shown it\n", 40)
}

// compactRuntime is the runtime of a session on the provider at url: a
// read_file tool, and, when window > 0, a context window of that many
// tokens, compacted by the model at the default share of it.
func compactRuntime(t testing.TB, s thread.Store, url string, window int) (*harness.Runtime, harness.Actor) {
	m, err := openai.New("fake", model.WithBaseURL(url), model.WithAPIKey("test"), model.WithLookupEnv(func(string) (string, bool) { return "", false }))
	require.NoError(t, err)
	read := harness.Tool{
		Spec:  facts.ToolSchema{Name: "read_file", Description: "Read a file."},
		Needs: action.Read,
		Run: func(_ context.Context, args json.RawMessage) (facts.Report, error) {
			var a struct{ Path string }
			if err := json.Unmarshal(args, &a); err != nil {
				return facts.Report{}, err
			}
			return facts.Report{Status: facts.StatusSucceeded, Stdout: sessionFile(a.Path)}, nil
		},
	}
	tools, err := harness.NewToolbox(read)
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0), harness.WithMaxSteps(10_000), func(c *harness.Config) { c.ContextWindow, c.CompactFraction = window, 0 }, harness.WithModelName("openai:fake"))
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tools)
	require.NoError(t, err)
	var blobs action.Blobs
	if b, ok := s.(action.Blobs); ok {
		blobs = b
	}
	rt, err := harness.NewRuntime(s, harness.Services{Model: m, Tools: tools, Blobs: blobs}, cfg)
	require.NoError(t, err)
	return rt, actor
}

// A long session compacts by the model when its context nears the
// window: the compaction turn is asked with the conversation so far, its
// exchange is kept, and the turn after it is sent the summary and the
// latest message instead of everything before.
func TestCompactionByTheModel(t *testing.T) {
	p := &provider{turns: 30}
	srv := httptest.NewServer(p)
	defer srv.Close()
	s := openBenchStore(t)
	rt, actor := compactRuntime(t, s, srv.URL, 6000)
	out, err := rt.Start(ctx, actor, "t", "Read every file, one a turn.")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)
	require.NoError(t, audit.VerifyLog(ctx, s, actor, "t"))

	var compactions []facts.ContextCompacted
	for f, err := range s.Read(ctx, "t", 1) {
		require.NoError(t, err)
		if f.Kind == facts.KindContextCompacted {
			cc, err := facts.Decode[facts.ContextCompacted](f)
			require.NoError(t, err)
			compactions = append(compactions, cc)
		}
	}
	require.NotEmpty(t, compactions, "the window was neared")
	for _, cc := range compactions {
		require.Equal(t, facts.CompactedByModel, cc.By)
		require.Empty(t, cc.Fallback)
		require.Contains(t, cc.Summary, "Files f1 to f")
		require.Positive(t, cc.Usage.InputTokens, "the compaction turn's usage, as the provider counted it")
		require.NotNil(t, cc.Exchange, "the compaction turn's request and response are kept")
		req, err := s.GetBlob(ctx, cc.Exchange.Request)
		require.NoError(t, err)
		require.Contains(t, string(req), "summariz")
		require.Positive(t, cc.Messages)
	}
	// Every turn's request stays under the window.
	for _, r := range p.requests() {
		require.Less(t, r.tokens, int64(6000), "a request of %d tokens", r.tokens)
	}
	before, after := aroundCompaction(p.requests())
	t.Logf("%d compactions; tokens sent before and after each: %v, %v", len(compactions), before, after)
	require.NotEmpty(t, before)
	for i := range before {
		require.Less(t, after[i], before[i]/2, "the turn after a compaction is sent far less than the turn before")
	}
}

// aroundCompaction returns, for every compaction turn, the tokens the
// normal turns just before and just after it were sent.
func aroundCompaction(rs []sent) (before, after []int64) {
	for i, r := range rs {
		if !r.summary || i == 0 || i+1 >= len(rs) || rs[i-1].summary || rs[i+1].summary {
			continue
		}
		before = append(before, rs[i-1].tokens)
		after = append(after, rs[i+1].tokens)
	}
	return before, after
}

// With a scripted model (which has no compaction turns) the summary is
// the extractive one, and the record says why.
func TestCompactionFallsBackToTheExtract(t *testing.T) {
	long := strings.Repeat("the cache is slow; ", 40)
	e := harnesstest.New(t, `{"tool_calls": [{"id": "r", "name": "read_file", "args": "{}"}], "text": "`+long+`", "usage": {"input_tokens": 900, "output_tokens": 100}}
{"text": "done"}`, func(c *harness.Config) { c.ContextWindow, c.CompactFraction = 1000, 0.5 })
	out, err := e.RT.Start(ctx, e.Actor, "t", "look: "+long)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	cc, err := facts.Decode[facts.ContextCompacted](e.Last("t", facts.KindContextCompacted))
	require.NoError(t, err)
	require.Empty(t, cc.By)
	require.Contains(t, cc.Fallback, "the model could not summarize")
	require.Contains(t, cc.Summary, "- user: look:")
	require.Equal(t, 3, e.Model.Calls(), "two turns, and the compaction turn the script could not take")
}

// The bounds are the thread's, recorded on system.configured when it
// starts: an actor configured with no window (a verifier's, say) folds a
// thread that compacted by its window as the run did, and a later resume
// with another window does not change when it compacts.
func TestCompactionBoundsAreRecorded(t *testing.T) {
	long := strings.Repeat("the cache is slow; ", 40)
	e := harnesstest.New(t, `{"tool_calls": [{"id": "r", "name": "read_file", "args": "{}"}], "text": "`+long+`", "usage": {"input_tokens": 900, "output_tokens": 100}}
{"text": "done"}`, func(c *harness.Config) { c.ContextWindow, c.CompactFraction = 1000, 0.5 })
	out, err := e.RT.Start(ctx, e.Actor, "t", "look: "+long)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	sc, err := facts.Decode[facts.SystemConfigured](e.Last("t", facts.KindSystemConfigured))
	require.NoError(t, err)
	require.Equal(t, &facts.ContextBounds{Window: 1000, Fraction: 0.5}, sc.Context)
	require.Contains(t, e.Kinds("t"), facts.KindContextCompacted)

	plain, err := harness.NewConfig()
	require.NoError(t, err)
	verifier, err := harness.CodingActor(plain, e.Toolbox)
	require.NoError(t, err)
	require.NoError(t, audit.VerifyLog(ctx, e.Store, verifier, "t"), "the record, not the verifier's configuration, says when to compact")

	// A log written before the bounds were recorded goes by the
	// configuration: with none, its compaction was never enabled.
	old := e.Log("t")
	stripped := facts.SystemConfigured{Prompt: sc.Prompt, Model: sc.Model, Tools: sc.Tools, Version: sc.Version, Workspace: sc.Workspace, Sandbox: sc.Sandbox}
	d, err := facts.NewDraft(facts.KindSystemConfigured, "", stripped)
	require.NoError(t, err)
	var prev facts.Hash
	for i := range old {
		if old[i].Kind == facts.KindSystemConfigured {
			old[i].Data = d.Data
		}
		old[i].Prev = prev
		prev = old[i].Hash()
	}
	err = audit.VerifyFacts(verifier, "t", factSeq(old))
	require.ErrorIs(t, err, audit.ErrUnverified)
	require.ErrorContains(t, err, "never enabled compact/")
	require.NoError(t, audit.VerifyFacts(e.Actor, "t", factSeq(old)))
}

// factSeq yields fs without errors, as a store's Read would.
func factSeq(fs []facts.Fact) iter.Seq2[facts.Fact, error] {
	return func(yield func(facts.Fact, error) bool) {
		for _, f := range fs {
			if !yield(f, nil) {
				return
			}
		}
	}
}
