package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

const token = "0123456789abcdef-ana"

// fixture is a server of a real workspace's real Pebble store, behind an
// httptest server: the real handlers.
type fixture struct {
	t      testing.TB
	root   string
	script string // the scripted model's spec, as threads record it
	place  stock.Place
	store  thread.Store
	stock  *stock.Stock
	srv    *serve.Server
	http   *httptest.Server
}

type option func(*serve.Options)

func newFixture(t testing.TB, script string, opts ...option) *fixture {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644))
	scriptFile := filepath.Join(root, "script.jsonl")
	require.NoError(t, os.WriteFile(scriptFile, []byte(script), 0o644))
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	store, err := p.HoldStore(context.Background(), 0, true)
	require.NoError(t, err)
	f := &fixture{t: t, root: root, script: "scripted:" + scriptFile, place: p, store: store}
	cfg, err := harness.NewConfig(harness.WithModelName(f.script), harness.WithModelBackoff(0))
	require.NoError(t, err)
	f.stock, err = stock.NewStock(p, cfg)
	require.NoError(t, err)
	f.serve(opts...)
	t.Cleanup(func() {
		f.close()
		require.NoError(t, store.Close())
	})
	return f
}

// newFixtureTB is newFixture for a benchmark.
func newFixtureTB(tb testing.TB, script string) *fixture { return newFixture(tb, script) }

// newFixtureOn is another server of f's store; the caller closes it.
func newFixtureOn(tb testing.TB, f *fixture) *fixture {
	g := *f
	g.t = tb
	g.serve()
	return &g
}

// serve starts the fixture's server and its httptest server.
func (f *fixture) serve(opts ...option) {
	o := serve.Options{Store: f.store, Stock: f.stock, Tokens: []stock.ServeToken{{Name: "ana", Token: token}}, WriteTimeout: 5 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	var err error
	f.srv, err = serve.New(o)
	require.NoError(f.t, err)
	f.http = httptest.NewUnstartedServer(f.srv.Handler())
	f.http.Config = f.srv.HTTPServer()
	f.http.Start()
}

// close stops the fixture's server (not its store).
func (f *fixture) close() {
	f.http.CloseClientConnections()
	f.http.Close()
	require.NoError(f.t, f.srv.Close())
}

// waitStarted waits until the thread's action has started, and returns
// when it was appended.
func (f *fixture) waitStarted(id string) time.Time {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for fact, err := range f.store.Read(context.Background(), id, 6) {
			require.NoError(f.t, err)
			if fact.Kind == facts.KindActionStarted {
				return fact.At
			}
		}
		time.Sleep(time.Millisecond)
	}
	f.t.Fatalf("thread %s: the tool never started", id)
	return time.Time{}
}

// start starts thread id with the script, as harness run --no-input
// would, and returns how it left it.
func (f *fixture) start(id string) harness.Outcome {
	f.t.Helper()
	m, err := stock.LoadModel(f.script)
	require.NoError(f.t, err)
	svc, err := f.stock.Services(m, stock.BlobsOf(f.store))
	require.NoError(f.t, err)
	rt, err := harness.NewRuntime(f.srv.Store(), svc, f.stock.Config)
	require.NoError(f.t, err)
	out, err := rt.Start(context.Background(), f.stock.Actor, id, "Set the cache TTL to 300")
	require.NoError(f.t, err)
	return out
}

// do makes a request with the bearer token (unless hdr says otherwise)
// and returns the response and its body.
func (f *fixture) do(method, path, body string, hdr ...string) (*http.Response, []byte) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.http.URL+path, strings.NewReader(body))
	require.NoError(f.t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := f.http.Client().Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	return resp, b
}

func (f *fixture) head(id string) uint64 {
	f.t.Helper()
	h, err := f.store.Head(context.Background(), id)
	require.NoError(f.t, err)
	return h.Seq
}

func (f *fixture) kinds(id string) []facts.Kind {
	f.t.Helper()
	var out []facts.Kind
	for fact, err := range f.store.Read(context.Background(), id, 1) {
		require.NoError(f.t, err)
		out = append(out, fact.Kind)
	}
	return out
}

func (f *fixture) last(id string, kind facts.Kind) facts.Fact {
	f.t.Helper()
	var found facts.Fact
	for fact, err := range f.store.Read(context.Background(), id, 1) {
		require.NoError(f.t, err)
		if fact.Kind == kind {
			found = fact
		}
	}
	require.NotZero(f.t, found.Seq, "no %s in %s", kind, id)
	return found
}

func count(ks []facts.Kind, k facts.Kind) int {
	n := 0
	for _, x := range ks {
		if x == k {
			n++
		}
	}
	return n
}

// detail is GET /api/threads/{id}.
func (f *fixture) detail(id string) serve.ThreadDetail {
	f.t.Helper()
	resp, b := f.do("GET", "/api/threads/"+id, "")
	require.Equal(f.t, http.StatusOK, resp.StatusCode, string(b))
	var d serve.ThreadDetail
	require.NoError(f.t, json.Unmarshal(b, &d))
	return d
}

// waitFor polls the thread's detail until ok holds.
func (f *fixture) waitFor(id string, what string, ok func(serve.ThreadDetail) bool) serve.ThreadDetail {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		d := f.detail(id)
		if ok(d) {
			return d
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("thread %s: %s never happened; last: %+v", id, what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func approveBody(d serve.ThreadDetail, approved bool, resume bool) string {
	return fmt.Sprintf(`{"kind": "confirmation", "request_id": %q, "approved": %t, "digest": %q, "resume": %t}`, d.Waits[0].RequestID, approved, d.Waits[0].Digest, resume)
}

// TestListAndDetail: the list says each thread's status and what it
// waits for; the detail has the pending call with its digest and the
// diff a write would make.
func TestListAndDetail(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	require.Equal(t, harness.StatusParked, f.start("t1").Status)
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "done.jsonl"), []byte(harnesstest.TextScript), 0o644))
	f.start("t2")

	resp, b := f.do("GET", "/api/threads", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	var list struct{ Threads []serve.ThreadSummary }
	require.NoError(t, json.Unmarshal(b, &list))
	require.Len(t, list.Threads, 2)
	require.Equal(t, "t1", list.Threads[0].Thread)
	require.Equal(t, harness.StatusParked, list.Threads[0].Status)
	require.Equal(t, "1-call_1", list.Threads[0].Waits[0].RequestID)
	require.Equal(t, stock.WorkspaceName(f.root), list.Threads[0].Workspace)
	require.True(t, list.Threads[0].Here)

	d := f.detail("t1")
	require.Len(t, d.Waits, 1)
	p := d.Waits[0]
	require.Equal(t, "write_file", p.Tool)
	require.NotEmpty(t, p.Digest)
	require.Contains(t, p.Preview, "-ttl_seconds = 60\n+ttl_seconds = 300")
	require.Len(t, d.Actions, 1)
	require.Equal(t, "requested", string(d.Actions[0].Stage))
}

// TestApproveTwiceAppendsOnce: an approval given twice (two tabs, a
// retried request) appends once, and records the name the token names.
func TestApproveTwiceAppendsOnce(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1")
	d := f.detail("t1")

	resp, b := f.do("POST", "/api/threads/t1/answer", approveBody(d, true, false))
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(b))
	var first serve.AnswerResult
	require.NoError(t, json.Unmarshal(b, &first))
	require.False(t, first.Duplicate)
	require.Equal(t, "ana", first.By)

	resp, b = f.do("POST", "/api/threads/t1/answer", approveBody(d, true, false))
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	var again serve.AnswerResult
	require.NoError(t, json.Unmarshal(b, &again))
	require.True(t, again.Duplicate)
	require.Equal(t, first.Seq, again.Seq)

	require.Equal(t, 1, count(f.kinds("t1"), facts.KindConfirmationAnswered))
	a, err := facts.Decode[facts.ConfirmationAnswered](f.last("t1", facts.KindConfirmationAnswered))
	require.NoError(t, err)
	require.Equal(t, "ana", a.By, "the token's name, never one the request gives")
	require.Equal(t, d.Waits[0].Digest, a.Digest)

	// A request cannot name who answers.
	resp, b = f.do("POST", "/api/threads/t1/answer", `{"kind": "confirmation", "request_id": "1-call_1", "approved": true, "digest": "x", "by": "mallory"}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(b))
	require.Contains(t, string(b), `unknown field \"by\"`)
}

// TestContradictingAnswerRefused: a denial after an approval (or an
// approval of another call's digest) is refused; nothing is appended.
func TestContradictingAnswerRefused(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1")
	d := f.detail("t1")

	bad := strings.Replace(approveBody(d, true, false), d.Waits[0].Digest, strings.Repeat("0", len(d.Waits[0].Digest)), 1)
	resp, b := f.do("POST", "/api/threads/t1/answer", bad)
	require.Equal(t, http.StatusConflict, resp.StatusCode, string(b))
	require.Contains(t, string(b), "digest_differs")
	require.Equal(t, uint64(5), f.head("t1"))

	resp, b = f.do("POST", "/api/threads/t1/answer", approveBody(d, true, false))
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(b))
	head := f.head("t1")
	resp, b = f.do("POST", "/api/threads/t1/answer", approveBody(d, false, false))
	require.Equal(t, http.StatusConflict, resp.StatusCode, string(b))
	require.Contains(t, string(b), "answer_differs")
	require.Contains(t, string(b), "approved by ana")
	require.Equal(t, head, f.head("t1"), "nothing appended")
}

// TestApproveResumes: an approval through the server resumes the thread
// there: the tool runs, the runtime observes it, the check passes.
func TestApproveResumes(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1")
	d := f.detail("t1")
	resp, b := f.do("POST", "/api/threads/t1/answer", approveBody(d, true, true))
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(b))
	require.Contains(t, string(b), `"resuming": true`)
	d = f.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone && !d.Resuming })
	got, err := os.ReadFile(filepath.Join(f.root, "cache.toml"))
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 300\n", string(got))
	a := d.Actions[0]
	require.Equal(t, facts.EffectObserved, a.Effect)
	require.Equal(t, facts.VerdictPass, a.Check.Verdict)
	require.Len(t, a.Changes, 1)
	require.Contains(t, a.Changes[0].Diff, "+ttl_seconds = 300", "the diff of the kept contents")

	resp, b = f.do("GET", "/api/threads/t1/replay", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	var rep serve.Replay
	require.NoError(t, json.Unmarshal(b, &rep))
	require.True(t, rep.Verified, rep.Verdict)

	resp, b = f.do("GET", "/api/threads/t1/undo?to=5", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Contains(t, string(b), `"path": "cache.toml"`)
	require.Equal(t, "ttl_seconds = 300\n", string(got), "a preview changes nothing")

	resp, b = f.do("GET", "/api/threads/t1/fork?at=5", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	var fp serve.ForkPreview
	require.NoError(t, json.Unmarshal(b, &fp))
	require.Equal(t, "t1-at5", fp.Fork)
	require.Equal(t, harness.StatusParked, fp.Status, "the fork starts where the thread waited")

	resp, b = f.do("GET", "/api/effects", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Contains(t, string(b), `"effect_state": "observed"`)
}

// TestAnswerAQuestion: a question's answer, and a second, different one
// refused.
func TestAnswerAQuestion(t *testing.T) {
	f := newFixture(t, harnesstest.QuestionScript)
	require.Equal(t, harness.StatusParked, f.start("t1").Status)
	d := f.detail("t1")
	require.Equal(t, "question", string(d.Waits[0].Kind))
	require.Equal(t, []string{"a.toml", "b.toml"}, d.Waits[0].Options)
	body := fmt.Sprintf(`{"kind": "question", "request_id": %q, "text": "b.toml"}`, d.Waits[0].RequestID)
	resp, b := f.do("POST", "/api/threads/t1/answer", body)
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(b))
	q, err := facts.Decode[facts.QuestionAnswered](f.last("t1", facts.KindQuestionAnswered))
	require.NoError(t, err)
	require.Equal(t, "b.toml", q.Text)
	require.Equal(t, "ana", q.By)
	f.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone })

	resp, b = f.do("POST", "/api/threads/t1/answer", strings.Replace(body, "b.toml", "a.toml", 1))
	require.Equal(t, http.StatusConflict, resp.StatusCode, string(b))
}

// event is one Server-Sent Event.
type event struct {
	id, name, data string
}

// readEvents reads n events of the stream (comments skipped).
func readEvents(t *testing.T, r *bufio.Reader, n int) []event {
	t.Helper()
	var out []event
	var e event
	for len(out) < n {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if e.name != "" {
				out = append(out, e)
			}
			e = event{}
		case strings.HasPrefix(line, "id: "):
			e.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			e.name = line[7:]
		case strings.HasPrefix(line, "data: "):
			e.data = line[6:]
		}
	}
	return out
}

// stream opens a thread's stream.
func (f *fixture) stream(ctx context.Context, path string, hdr ...string) (*http.Response, *bufio.Reader) {
	f.t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", f.http.URL+path, nil)
	require.NoError(f.t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := f.http.Client().Do(req)
	require.NoError(f.t, err)
	require.Equal(f.t, http.StatusOK, resp.StatusCode)
	require.Equal(f.t, "text/event-stream", resp.Header.Get("Content-Type"))
	return resp, bufio.NewReader(resp.Body)
}

// TestStream: a stream sends the thread's facts, then each fact as it is
// appended, in order, as the log has them; Last-Event-ID goes on after
// the last one seen.
func TestStream(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, r := f.stream(ctx, "/api/threads/t1/stream")
	defer resp.Body.Close()
	evs := readEvents(t, r, 5)
	for i, e := range evs {
		require.Equal(t, "fact", e.name)
		require.Equal(t, fmt.Sprint(i+1), e.id)
	}
	var fifth facts.Fact
	require.NoError(t, json.Unmarshal([]byte(evs[4].data), &fifth))
	require.Equal(t, facts.KindConfirmationRequested, fifth.Kind)

	d := f.detail("t1")
	_, b := f.do("POST", "/api/threads/t1/answer", approveBody(d, true, true))
	require.Contains(t, string(b), `"resuming": true`)
	// confirmation.answered, action.started, action.completed,
	// check.recorded, model.turn: as they are appended.
	evs = readEvents(t, r, 5)
	var kinds []facts.Kind
	for i, e := range evs {
		require.Equal(t, fmt.Sprint(6+i), e.id)
		var fact facts.Fact
		require.NoError(t, json.Unmarshal([]byte(e.data), &fact))
		kinds = append(kinds, fact.Kind)
	}
	require.Equal(t, []facts.Kind{facts.KindConfirmationAnswered, facts.KindActionStarted, facts.KindActionCompleted, facts.KindCheckRecorded, facts.KindModelTurn}, kinds)

	// A client that comes back says where it was.
	resp2, r2 := f.stream(ctx, "/api/threads/t1/stream", "Last-Event-ID", "8")
	defer resp2.Body.Close()
	evs = readEvents(t, r2, 1)
	require.Equal(t, "9", evs[0].id)
}

// TestRefusedPosts: a post without a token, with one the server does not
// know, or from a browser without the page's CSRF token (or from another
// site) is refused, and nothing is appended.
func TestRefusedPosts(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1")
	d := f.detail("t1")
	body := approveBody(d, true, false)
	// The cookie a browser gets from the address with the token.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(f.http.URL + "/?token=" + token)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "./", resp.Header.Get("Location"), "the token leaves the address")
	cs := resp.Cookies()
	require.Len(t, cs, 1)
	require.True(t, cs[0].HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, cs[0].SameSite)
	cookie := cs[0].Name + "=" + cs[0].Value
	csrf := pageCSRF(t, f, cookie)
	// Another page's token: the page's with its last digit changed (to
	// one it is not: a token ending in "0" would otherwise be let in).
	other := csrf[:31] + "0"
	if csrf[31] == '0' {
		other = csrf[:31] + "1"
	}

	cases := []struct {
		name   string
		status int
		hdr    []string
	}{
		{"no token", http.StatusUnauthorized, []string{"Authorization", ""}},
		{"a token the server does not know", http.StatusUnauthorized, []string{"Authorization", "Bearer not-the-token-at-all"}},
		{"not a bearer token", http.StatusUnauthorized, []string{"Authorization", "Basic " + token}},
		{"the cookie without a CSRF token", http.StatusForbidden, []string{"Authorization", "", "Cookie", cookie}},
		{"the cookie with a bad CSRF token", http.StatusForbidden, []string{"Authorization", "", "Cookie", cookie, "X-CSRF-Token", strings.Repeat("f", 32)}},
		{"the cookie with another page's CSRF token", http.StatusForbidden, []string{"Authorization", "", "Cookie", cookie, "X-CSRF-Token", other}},
		{"from another site", http.StatusForbidden, []string{"Authorization", "", "Cookie", cookie, "X-CSRF-Token", csrf, "Sec-Fetch-Site", "cross-site"}},
		{"from another origin", http.StatusForbidden, []string{"Origin", "http://evil.example"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := f.do("POST", "/api/threads/t1/answer", body, tc.hdr...)
			require.Equal(t, tc.status, resp.StatusCode, string(b))
			require.Equal(t, uint64(5), f.head("t1"), "nothing appended")
		})
	}
	// And the same cookie with the page's CSRF token is let in.
	resp2, b := f.do("POST", "/api/threads/t1/answer", body, "Authorization", "", "Cookie", cookie, "X-CSRF-Token", csrf, "Sec-Fetch-Site", "same-origin")
	require.Equal(t, http.StatusCreated, resp2.StatusCode, string(b))
	// A read needs a token too.
	resp2, _ = f.do("GET", "/api/threads", "", "Authorization", "")
	require.Equal(t, http.StatusUnauthorized, resp2.StatusCode)
	resp2, b = f.do("GET", "/", "", "Authorization", "")
	require.Equal(t, http.StatusUnauthorized, resp2.StatusCode)
	require.Contains(t, string(b), "needs its token")
}

var csrfField = regexp.MustCompile(`data-csrf="([0-9a-f]+)"`)

// pageCSRF is the CSRF token of the page a browser with cookie sees.
func pageCSRF(t *testing.T, f *fixture, cookie string) string {
	t.Helper()
	resp, b := f.do("GET", "/t/t1", "", "Authorization", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	m := csrfField.FindSubmatch(b)
	require.NotNil(t, m, "the page carries its CSRF token")
	return string(m[1])
}

// TestBadInput: what the API cannot use is refused with a status and a
// message that say what is wrong; nothing is appended.
func TestBadInput(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1")
	d := f.detail("t1")
	good := approveBody(d, true, false)
	cases := []struct {
		name, method, path, body string
		status                   int
		says                     string
		hdr                      []string
	}{
		{"an unknown thread", "GET", "/api/threads/nope", "", 404, "unknown thread", nil},
		{"an unknown thread's stream", "GET", "/api/threads/nope/stream", "", 404, "not found", nil},
		{"an answer to an unknown thread", "POST", "/api/threads/nope/answer", good, 404, "unknown", nil},
		{"a thread id that cannot be one", "GET", "/api/threads/..x", "", 404, "bad thread id", nil},
		{"malformed JSON", "POST", "/api/threads/t1/answer", `{"kind": "confirmation",`, 400, "not a JSON answer", nil},
		{"two JSON values", "POST", "/api/threads/t1/answer", good + good, 400, "more than one JSON value", nil},
		{"an unknown field", "POST", "/api/threads/t1/answer", `{"kind": "confirmation", "aproved": true}`, 400, "unknown field", nil},
		{"an oversized body", "POST", "/api/threads/t1/answer", `{"kind": "confirmation", "reason": "` + strings.Repeat("x", 70<<10) + `"}`, 413, "larger than 65536 bytes", nil},
		{"not JSON", "POST", "/api/threads/t1/answer", "kind=confirmation", 415, "want application/json", []string{"Content-Type", "application/x-www-form-urlencoded"}},
		{"an unknown kind", "POST", "/api/threads/t1/answer", `{"kind": "vote", "request_id": "1-call_1"}`, 400, "want confirmation, question, reconcile, plan or budget", nil},
		{"an approval without a digest", "POST", "/api/threads/t1/answer", `{"kind": "confirmation", "request_id": "1-call_1", "approved": true}`, 400, "names the digest", nil},
		{"no request", "POST", "/api/threads/t1/answer", `{"kind": "confirmation", "approved": true, "digest": "x"}`, 400, "names its request", nil},
		{"a request that is not open", "POST", "/api/threads/t1/answer", `{"kind": "confirmation", "request_id": "9-nope", "approved": true, "digest": "x"}`, 409, "9-nope", nil},
		{"a question that is not asked", "POST", "/api/threads/t1/answer", `{"kind": "question", "request_id": "q", "text": "x"}`, 409, "no question", nil},
		{"a bad decision", "POST", "/api/threads/t1/answer", `{"kind": "reconcile", "request_id": "1-call_1", "decision": "maybe"}`, 400, "want accept, retry or abandon", nil},
		{"a bad seq", "GET", "/api/threads/t1/facts?from=x", "", 400, "want a seq", nil},
		{"a fork past the end", "GET", "/api/threads/t1/fork?at=99", "", 400, "want a seq from 1 to 5", nil},
		{"an undo past the end", "GET", "/api/threads/t1/undo?to=99", "", 400, "past the thread's last fact", nil},
		{"no such API", "GET", "/api/nothing", "", 404, "no API", nil},
		{"a method the API does not take", "DELETE", "/api/threads/t1", "", 404, "no API at DELETE /api/threads/t1", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := f.do(tc.method, tc.path, tc.body, tc.hdr...)
			require.Equal(t, tc.status, resp.StatusCode, string(b))
			require.Contains(t, string(b), tc.says)
			require.Equal(t, uint64(5), f.head("t1"), "nothing appended")
		})
	}
}

// TestPageWithoutJavaScript: the page reads without a script, and its
// forms post and come back; what the model wrote is escaped.
// browser is a client that keeps cookies, as a browser does, and a GET
// through it that requires 200 and returns the body.
func (f *fixture) browser(t *testing.T) (*http.Client, func(path string) string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	return c, func(path string) string {
		t.Helper()
		resp, err := c.Get(f.http.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
		return string(b)
	}
}

func TestPageWithoutJavaScript(t *testing.T) {
	hostile := `{"text": "<script>alert(1)</script>\u001b[2J", "tool_calls": [{"id": "call_1", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"<img src=x onerror=alert(1)>\\n\"}"}]}
{"text": "Done."}`
	f := newFixture(t, hostile)
	f.start("t1")
	c, get := f.browser(t)
	list := get("/?token=" + token)
	require.Contains(t, list, `<a href="t/t1">t1</a>`)
	require.Contains(t, list, "confirmation 1-call_1")
	page := get("/t/t1")
	require.NotContains(t, page, "<script>alert")
	require.NotContains(t, page, "<img src=x")
	require.NotContains(t, page, "\x1b")
	require.Contains(t, page, "&lt;img src=x onerror=alert(1)&gt;")
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	require.NotNil(t, m)
	d := f.detail("t1")
	form := url.Values{"csrf": {m[1]}, "kind": {"confirmation"}, "request": {"1-call_1"}, "digest": {d.Waits[0].Digest}, "answer": {"deny"}, "reason": {"not <now>"}}
	resp, err := c.PostForm(f.http.URL+"/t/t1/answer", form)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Contains(t, resp.Request.URL.String(), "/t/t1?answered=6", "the post redirects to the page")
	require.Contains(t, string(b), "answered (seq 6)")
	a, err := facts.Decode[facts.ConfirmationAnswered](f.last("t1", facts.KindConfirmationAnswered))
	require.NoError(t, err)
	require.False(t, a.Approved)
	require.Equal(t, "ana", a.By)
	require.Equal(t, "not <now>", a.Reason)

	// The form without its CSRF field is refused.
	delete(form, "csrf")
	resp, err = c.PostForm(f.http.URL+"/t/t1/answer", form)
	require.NoError(t, err)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode, string(b))
	require.Contains(t, string(b), "no CSRF token")
	// Assets are served, templates are not.
	resp, err = c.Get(f.http.URL + "/assets/app.js")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, err = c.Get(f.http.URL + "/assets/page.tmpl")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// TestOtherWorkspaceIsNotResumed: a thread recorded in another workspace
// (a shared store) is shown and answered, never resumed here.
func TestOtherWorkspaceIsNotResumed(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	cfg, err := harness.NewConfig(harness.WithModelName(f.script), harness.WithWorkspace("elsewhere:/srv/app"))
	require.NoError(t, err)
	other, err := stock.NewStock(f.place, cfg)
	require.NoError(t, err)
	m, err := model.ParseScript("s", []byte(harnesstest.ToolScript))
	require.NoError(t, err)
	rt, err := harness.NewRuntime(f.srv.Store(), harness.Services{Model: m, Tools: other.Toolbox}, cfg)
	require.NoError(t, err)
	_, err = rt.Start(context.Background(), other.Actor, "far", "go")
	require.NoError(t, err)
	d := f.detail("far")
	require.Equal(t, "elsewhere:/srv/app", d.Workspace)
	require.False(t, d.Here)
	require.Empty(t, d.Waits[0].Preview, "no preview of files that are elsewhere")
	resp, b := f.do("POST", "/api/threads/far/answer", approveBody(d, true, true))
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(b))
	require.Contains(t, string(b), "works in elsewhere:/srv/app, not here")
	resp, b = f.do("POST", "/api/threads/far/resume", "")
	require.Equal(t, http.StatusConflict, resp.StatusCode, string(b))
	require.Equal(t, 0, count(f.kinds("far"), facts.KindActionStarted))
}

// TestServersStoreKeepsBlobs: the store the server gives its process
// keeps contents in the held store, as the held store would.
func TestServersStoreKeepsBlobs(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	b := stock.BlobsOf(f.srv.Store())
	require.NotNil(t, b)
	d, err := b.PutBlob(context.Background(), []byte("kept"))
	require.NoError(t, err)
	got, err := stock.BlobsOf(f.store).GetBlob(context.Background(), d)
	require.NoError(t, err)
	require.Equal(t, "kept", string(got))
	require.Equal(t, f.store, f.srv.Store().Backing(), "the same store to harness.Hold")
}
