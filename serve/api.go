package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/search"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// routes are the page's and the API's. Every one of them is behind
// authenticate.
//
//	GET  /api/threads                    the threads, each its state (?after=ID&limit=N; ?status=S, ?root=ID, ?workspace=HOST:ROOT keep some)
//	GET  /api/threads/{id}               one thread: where it stands, its open requests, its actions
//	GET  /api/threads/{id}/state         where it stands: the one document every front end gives (drive.State)
//	GET  /api/threads/{id}/facts         its facts (?from=SEQ)
//	GET  /api/threads/{id}/stream        its facts as they are appended (Server-Sent Events; ?from=SEQ or Last-Event-ID)
//	GET  /api/threads/{id}/progress      what it does between facts while the server drives it: model text, command output (Server-Sent Events, ephemeral; see progress.go)
//	POST /api/threads/{id}/answer        answer an open request (JSON: see AnswerRequest)
//	POST /api/threads/{id}/resume        have the server resume it
//	POST /api/threads/{id}/stop          stop it, cutting off what runs in it wherever it runs (JSON, optional: see StopRequest)
//	GET  /api/threads/{id}/replay        the record told back, and replay --verify's verdict
//	GET  /api/threads/{id}/undo?to=SEQ   what an undo to SEQ would restore (rewind.UndoPlan; 409 UndoRefused)
//	GET  /api/threads/{id}/fork?at=SEQ   what a fork at SEQ would be
//	POST /api/threads/{id}/undo          undo what a preview showed (JSON: see UndoRequest)
//	POST /api/threads/{id}/fork          fork it (JSON: see ForkRequest)
//	POST /api/threads/{id}/plan          {"on": true|false}: plan mode from the next turn (PlanRequest)
//	GET  /api/effects                    every action of every thread, with its effect state (audit.Effect, as harness effects -o json)
//	GET  /api/search?q=QUERY             facts across every thread (drive.SearchResult; ?limit=N&page=CURSOR)
//
// Every answer is JSON with snake_case keys, a list [] rather than null,
// times in RFC 3339; where the command line prints the same thing with -o
// json (effects, an undo's plan, a fork, an action's audit) it is the same
// document, from the same type.
func (s *Server) routes() {
	mux := http.NewServeMux()
	api := func(pattern string, h func(http.ResponseWriter, *http.Request) error) {
		mux.Handle(pattern, s.authenticate(s.apiHandler(h)))
	}
	api("GET /api/threads", s.apiThreads)
	api("GET /api/threads/{id}", s.apiThread)
	api("GET /api/threads/{id}/state", s.apiState)
	api("GET /api/threads/{id}/facts", s.apiFacts)
	api("GET /api/threads/{id}/stream", s.apiStream)
	api("GET /api/threads/{id}/progress", s.apiProgress)
	api("POST /api/threads/{id}/answer", s.apiAnswer)
	api("POST /api/threads/{id}/resume", s.apiResume)
	api("POST /api/threads/{id}/stop", s.apiStop)
	api("POST /api/threads/{id}/plan", s.apiPlan)
	api("GET /api/threads/{id}/replay", s.apiReplay)
	api("GET /api/threads/{id}/undo", s.apiUndo)
	api("GET /api/threads/{id}/fork", s.apiFork)
	api("POST /api/threads/{id}/undo", s.apiUndoPost)
	api("POST /api/threads/{id}/fork", s.apiForkPost)
	api("GET /api/effects", s.apiEffects)
	api("GET /api/search", s.apiSearch)
	mux.Handle("/api/", s.authenticate(s.apiHandler(func(w http.ResponseWriter, r *http.Request) error {
		return &httpError{status: http.StatusNotFound, code: "not_found", msg: fmt.Sprintf("no API at %s %s", r.Method, r.URL.Path)}
	})))
	s.pageRoutes(mux)
	s.mux = mux
}

// httpError is an error with the status it answers.
type httpError struct {
	status int
	code   string
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &httpError{status: http.StatusBadRequest, code: "bad_request", msg: fmt.Sprintf(format, args...)}
}

// statusOf is the status and code an error answers.
func statusOf(err error) (int, string) {
	var he *httpError
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		return he.status, he.code
	case errors.As(err, &mb):
		return http.StatusRequestEntityTooLarge, "too_large"
	case errors.Is(err, harness.ErrUnknownThread), errors.Is(err, thread.ErrNotFound):
		return http.StatusNotFound, "unknown_thread"
	case errors.Is(err, harness.ErrNotInTree), errors.Is(err, harness.ErrNotChild):
		// A request named as another thread's that is not in this
		// thread's tree: nothing of this tree goes by that name.
		return http.StatusNotFound, "not_in_tree"
	case errors.Is(err, thread.ErrBadThreadID):
		return http.StatusBadRequest, "bad_thread_id"
	case errors.Is(err, drive.ErrAnswerDiffers):
		return http.StatusConflict, "answer_differs"
	case errors.Is(err, scheduler.ErrDigest):
		return http.StatusConflict, "digest_differs"
	case errors.Is(err, drive.ErrNoRequest), errors.Is(err, scheduler.ErrUnknownRequest):
		return http.StatusConflict, "no_such_request"
	case errors.Is(err, drive.ErrWhichRequest):
		return http.StatusBadRequest, "which_request"
	case errors.Is(err, drive.ErrBadReply):
		return http.StatusBadRequest, "bad_request"
	case errors.Is(err, scheduler.ErrNotAnOption):
		return http.StatusUnprocessableEntity, "not_an_option"
	case errors.Is(err, scheduler.ErrBadAnswer):
		return http.StatusUnprocessableEntity, "bad_answer"
	case errors.Is(err, facts.ErrPayload), errors.Is(err, facts.ErrInvalid):
		return http.StatusBadRequest, "bad_payload"
	case errors.Is(err, ErrNotHere):
		return http.StatusConflict, "not_here"
	case errors.Is(err, ErrDrivenElsewhere):
		return http.StatusConflict, "driven_elsewhere"
	case errors.Is(err, stock.ErrProjectRule):
		return http.StatusConflict, "rule_not_kept"
	case errors.Is(err, stock.ErrBadSettings):
		return http.StatusBadRequest, "bad_rule"
	case errors.Is(err, rewind.ErrUndoRefused):
		return http.StatusConflict, "undo_refused"
	case errors.Is(err, rewind.ErrMoved):
		return http.StatusConflict, "moved"
	case errors.Is(err, harness.ErrThreadExists):
		return http.StatusConflict, "thread_exists"
	case errors.Is(err, search.ErrQuery), errors.Is(err, search.ErrCursor):
		return http.StatusBadRequest, "bad_query"
	case errors.Is(err, search.ErrLocked):
		return http.StatusServiceUnavailable, "busy"
	case errors.Is(err, context.Canceled):
		return 499, "cancelled"
	}
	return http.StatusInternalServerError, "internal"
}

// apiHandler runs an API handler with its writes bounded in time and its
// error answered as JSON.
func (s *Server) apiHandler(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w = s.timed(w)
		if err := h(w, r); err != nil {
			status, code := statusOf(err)
			if status == http.StatusInternalServerError {
				s.opts.Logf("%s %s: %v", r.Method, r.URL.Path, err)
			}
			writeError(w, r, true, status, code, err.Error())
		}
	})
}

// timedWriter bounds each write to the client in time (Options.
// WriteTimeout): a client that stops reading is let go, however long the
// answer took to make, and a stream may last.
type timedWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (s *Server) timed(w http.ResponseWriter) http.ResponseWriter {
	return &timedWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: s.opts.WriteTimeout}
}

// Write writes within the timeout.
func (t *timedWriter) Write(p []byte) (int, error) {
	t.rc.SetWriteDeadline(time.Now().Add(t.timeout))
	return t.ResponseWriter.Write(p)
}

// Unwrap is the writer it bounds, for http.ResponseController.
func (t *timedWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, err := w.Write(b.Bytes())
	return err
}

// writeError answers an error: JSON {"error", "code"} for the API, a
// line of text otherwise.
func writeError(w http.ResponseWriter, _ *http.Request, api bool, status int, code, msg string) {
	if api {
		writeJSON(w, status, map[string]string{"error": msg, "code": code})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	io.WriteString(w, msg+"\n")
}

// threadID is the request's thread id, checked.
func threadID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if err := thread.ValidateID(id); err != nil {
		return "", &httpError{status: http.StatusNotFound, code: "unknown_thread", msg: err.Error()}
	}
	return id, nil
}

// seqParam reads a seq from the query; def when absent.
func seqParam(r *http.Request, name string, def uint64) (uint64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, badRequest("?%s=%q: want a seq (a number from 1)", name, v)
	}
	return n, nil
}

func (s *Server) apiThreads(w http.ResponseWriter, r *http.Request) error {
	limit := 1000
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return badRequest("?limit=%q: want a number from 1", v)
		}
		limit = n
	}
	q := r.URL.Query()
	o := drive.ListOptions{After: q.Get("after"), Limit: limit, Status: harness.Status(q.Get("status")), Root: q.Get("root"), Workspace: q.Get("workspace")}
	switch o.Status {
	case "", harness.StatusParked, harness.StatusDone, harness.StatusFailed, harness.StatusStopped, harness.StatusResumable, drive.StatusRunning:
	default:
		return badRequest("?status=%q: want parked, done, failed, stopped, resumable or running", o.Status)
	}
	if o.Root != "" {
		if err := thread.ValidateID(o.Root); err != nil {
			return badRequest("?root=%q: %v", o.Root, err)
		}
	}
	list, next, err := s.threads(r.Context(), o)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"threads": list, "next": next})
}

func (s *Server) apiThread(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	d, err := s.detail(r.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, d)
}

func (s *Server) apiState(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	st, err := s.state(r.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st)
}

// maxFacts bounds one answer of facts; ?from= pages on.
const maxFacts = 10000

func (s *Server) apiFacts(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	from, err := seqParam(r, "from", 1)
	if err != nil {
		return err
	}
	if _, err := s.store.Head(r.Context(), id); err != nil {
		return err
	}
	out := []facts.Fact{}
	for f, err := range s.store.Read(r.Context(), id, from) {
		if err != nil {
			return err
		}
		out = append(out, f)
		if len(out) == maxFacts {
			break
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// AnswerRequest is the body of an answer posted to the API:
//
//	{"kind": "confirmation", "request_id": "1-call_1", "approved": true, "digest": "…"}
//	{"kind": "confirmation", "request_id": "1-call_1", "approved": false, "reason": "not now", "digest": "…"}
//	{"kind": "question", "request_id": "q-1", "text": "cache.toml"}
//	{"kind": "reconcile", "request_id": "1-call_1", "decision": "accept", "note": "checked"}
//	{"kind": "budget", "request_id": "budget", "usd": 5, "tokens": 200000, "turns": 10}
//	{"kind": "plan", "request_id": "plan-2", "approved": true}
//	{"kind": "plan", "request_id": "plan-2", "text": "Cover the CLI too"}
//	{"kind": "question", "request_id": "1-c1-e1", "elicit": "accept", "content": {"name": "Ana"}}
//	{"kind": "question", "request_id": "1-c1-e1", "elicit": "decline"}
//	{"kind": "confirmation", "request_id": "1-call_1", "approved": true, "digest": "…", "always": "run_command:go test *", "project": true}
//
// A question an MCP server asked during a call (its pending request has
// "elicit") is answered with elicit — accept (with content, or fields as
// text, which the server's schema must validate), decline or cancel —
// never with text.
//
// A raise of a budget is posted to the root of the thread's tree (the
// budget is the tree's), and the root is resumed.
// An approval or denial must name the digest of the call (from the
// thread's pending request): one given for another call is refused. An
// approval may add a rule ("always", a tool pattern) to the thread's
// policy; with "project" the rule is also kept for the server's workspace
// in the person's own configuration (the trust file, never a file in the
// workspace), so that later threads there start with it — only for a
// thread of the server's own workspace. The
// server resumes the thread afterwards unless "resume" is false. Who
// answered is the person the request's token names.
type AnswerRequest struct {
	Kind      fold.WaitKind `json:"kind"`
	RequestID string        `json:"request_id"`
	Approved  drive.YesNo   `json:"approved,omitempty"`
	Reason    string        `json:"reason,omitempty"`
	Digest    string        `json:"digest,omitempty"`
	Text      string        `json:"text,omitempty"`
	Decision  string        `json:"decision,omitempty"`
	Note      string        `json:"note,omitempty"`
	// USD, Tokens and Turns raise the tree's budget (kind budget; see
	// budget.go): Turns the root's bound in model turns.
	USD    float64     `json:"usd,omitempty"`
	Tokens int64       `json:"tokens,omitempty"`
	Turns  int64       `json:"turns,omitempty"`
	Resume drive.YesNo `json:"resume,omitempty"`
	// Elicit, Content and Fields answer an MCP server's question (see
	// drive.Reply).
	Elicit  string            `json:"elicit,omitempty"`
	Content json.RawMessage   `json:"content,omitempty"`
	Fields  map[string]string `json:"fields,omitempty"`
	Always  string            `json:"always,omitempty"`
	Project bool              `json:"project,omitempty"`
}

// AnswerResult says what an answer did.
type AnswerResult struct {
	Thread    string `json:"thread"`
	RequestID string `json:"request_id"`
	// Seq is where the answer is in the log; Duplicate is true when it
	// was given before (nothing was appended).
	Seq       uint64 `json:"seq"`
	Duplicate bool   `json:"duplicate"`
	// By is who the answer records.
	By string `json:"by"`
	// Resuming is true when the server resumes the thread now.
	Resuming bool `json:"resuming"`
	// NotResumed says why the thread was not resumed, when it was asked.
	NotResumed string `json:"not_resumed,omitempty"`
}

// answer posts a person's answer to the thread's open request, as
// drive.Answer does, recording who as the one who gave it; then resumes
// the thread if asked.
func (s *Server) answer(ctx context.Context, who Identity, id string, a AnswerRequest) (AnswerResult, error) {
	if a.RequestID == "" {
		return AnswerResult{}, badRequest("an answer names its request (request_id)")
	}
	reply, err := replyOf(a, who.Name)
	if err != nil {
		return AnswerResult{}, err
	}
	if id, err = s.answerRoot(ctx, id, a); err != nil {
		return AnswerResult{}, err
	}
	post := drive.AnswerPending
	if reply.Always != "" {
		// The rule goes to the thread's policy (and, for the project, to
		// the person's own configuration) before the approval.
		post = s.session.AnswerPending
		if reply.Project {
			if err := s.ownThread(ctx, id); err != nil {
				return AnswerResult{}, err
			}
		}
	}
	c := s.cachedThread(ctx, id)
	c.mu.Lock()
	ans, err := drive.AnswerThrough(ctx, c.th, reply, post)
	c.mu.Unlock()
	if errors.Is(err, harness.ErrUnknownThread) {
		s.forget(id)
	}
	if err != nil {
		return AnswerResult{}, err
	}
	res := AnswerResult{Thread: id, RequestID: ans.Request.RequestID, Seq: ans.Posted.Seq, Duplicate: ans.Posted.Duplicate, By: who.Name}
	if a.Resume.Or(true) {
		if err := s.Resume(ctx, id); err != nil {
			res.NotResumed = err.Error()
		} else {
			res.Resuming = true
		}
	}
	return res, nil
}

// ownThread is nil for a thread of the server's own workspace, and
// ErrNotHere for another's: a rule kept for the project is the server's
// workspace's, and must not come from a thread working elsewhere.
func (s *Server) ownThread(ctx context.Context, id string) error {
	st, err := s.state(ctx, id)
	if err != nil {
		return err
	}
	if !s.here(st.Workspace) {
		return fmt.Errorf("thread %s works in %s, not here (%s): %w; a rule for that project is kept from there", id, st.Workspace, s.opts.Stock.Config.Workspace, ErrNotHere)
	}
	return nil
}

// replyOf checks an answer and makes it the reply it is, by who.
func replyOf(a AnswerRequest, by string) (drive.Reply, error) {
	r := drive.Reply{Kind: a.Kind, Request: a.RequestID, By: by}
	switch a.Kind {
	case fold.WaitConfirmation:
		if !a.Approved.Said() {
			return r, badRequest("a confirmation's answer says whether it is approved (approved: true or false)")
		}
		if a.Digest == "" {
			return r, badRequest("an approval names the digest of the call it approves (digest, from the pending request)")
		}
		r.Approved, r.Digest, r.Reason = a.Approved.Or(false), a.Digest, a.Reason
		if a.Project && a.Always == "" {
			return r, badRequest("a rule for the project names its rule (always)")
		}
		if a.Always != "" {
			if !r.Approved {
				return r, badRequest("a rule (always) comes with an approval")
			}
			if _, err := drive.ParsePattern(a.Always); err != nil {
				return r, badRequest("always: %v", err)
			}
			r.Always, r.Project = a.Always, a.Project
		}
	case fold.WaitQuestion:
		if a.Elicit != "" {
			r.Elicit, r.Content, r.Fields = facts.ElicitAction(a.Elicit), a.Content, a.Fields
			if err := r.Elicit.Validate(); err != nil {
				return r, badRequest("elicit %q: want accept, decline or cancel", a.Elicit)
			}
			break
		}
		if strings.TrimSpace(a.Text) == "" {
			return r, badRequest("a question's answer has text (or, for an MCP server's question, elicit)")
		}
		r.Text = a.Text
	case fold.WaitReconcile:
		r.Decision, r.Reason = facts.Decision(a.Decision), a.Note
		if err := r.Decision.Validate(); err != nil {
			return r, badRequest("decision %q: want accept, retry or abandon", a.Decision)
		}
	case fold.WaitBudget:
		return budgetReply(a, r)
	case fold.WaitPlan:
		// Acting on the plan (approved: true), or text asking for
		// another; drive.AnswerPlan checks the plan named still waits.
		r.Approved, r.Text = a.Approved.Or(false), a.Text
		if err := r.Check(); err != nil {
			return r, badRequest("%s: a plan's answer is approved: true (act on it) or text (ask for another plan)", a.RequestID)
		}
	default:
		return r, badRequest("kind %q: want confirmation, question, reconcile, plan or budget", a.Kind)
	}
	return r, nil
}

// decodeJSON reads the request's body as exactly one value of v's type,
// no unknown fields, at most Options.MaxBody bytes.
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return &httpError{status: http.StatusUnsupportedMediaType, code: "bad_content_type", msg: fmt.Sprintf("the body is %s; want application/json", ct)}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return &httpError{status: http.StatusRequestEntityTooLarge, code: "too_large", msg: fmt.Sprintf("the body is larger than %d bytes", mb.Limit)}
		}
		return badRequest("the body is not a JSON answer: %v", err)
	}
	if dec.More() {
		return badRequest("the body holds more than one JSON value")
	}
	return nil
}

func (s *Server) apiAnswer(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	var a AnswerRequest
	if err := s.decodeJSON(w, r, &a); err != nil {
		return err
	}
	who, _ := IdentityOf(r.Context())
	res, err := s.answer(r.Context(), who, id, a)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if res.Duplicate {
		status = http.StatusOK
	}
	return writeJSON(w, status, res)
}

func (s *Server) apiResume(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	if err := s.Resume(r.Context(), id); err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, map[string]any{"thread": id, "resuming": true})
}

// StopRequest is the optional body of POST /api/threads/{id}/stop:
//
//	{"reason": "wrong branch"}
//
// Who stopped the thread is the person the request's token names.
type StopRequest struct {
	Reason string `json:"reason,omitempty"`
}

// apiStop stops the thread (drive.Stop): a command it runs, here or in
// another process, is cut off. It answers once the thread is stopped,
// with its state.
func (s *Server) apiStop(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	var req StopRequest
	if r.ContentLength != 0 {
		if err := s.decodeJSON(w, r, &req); err != nil {
			return err
		}
	}
	who, _ := IdentityOf(r.Context())
	st, err := s.stop(r.Context(), who.Name, id, req.Reason)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st)
}

// stop is drive.Stop of the thread, on a Thread of its own (a stop waits
// for whoever drives the thread to let go; the kept fold stays free for
// readers meanwhile).
func (s *Server) stop(ctx context.Context, by, id, reason string) (drive.State, error) {
	th, err := s.reader.Open(ctx, s.opts.Stock.Actor, id)
	if err != nil {
		return drive.State{Thread: id}, err
	}
	return drive.Stop(ctx, th, by, reason)
}

// Replay is the record told back, with replay --verify's verdict.
type Replay struct {
	Thread   string         `json:"thread"`
	Status   harness.Status `json:"status"`
	Entries  []ReplayEntry  `json:"entries"`
	Verified bool           `json:"verified"`
	// Verdict says what was checked, or what failed where.
	Verdict string `json:"verdict"`
	// Children are the child threads of its tree (see the delegate tool),
	// each after its parent; the verdict covers them and their links.
	Children []string `json:"children,omitempty"`
}

// ReplayEntry is one fact of the record, with its action's audit on an
// action's completion.
type ReplayEntry struct {
	Fact facts.Fact `json:"fact"`
	// Line is the fact in one line for a person ("summary", as in harness
	// replay -o json).
	Line   string             `json:"summary"`
	Action *audit.ActionAudit `json:"action,omitempty"`
}

// replay tells the thread's record back and verifies it.
func (s *Server) replay(ctx context.Context, id string) (Replay, error) {
	actor := s.opts.Stock.Actor
	tree, err := audit.ReplayTree(ctx, s.store, actor, id)
	if err != nil {
		return Replay{}, err
	}
	record := tree.Audit
	out := Replay{Thread: id, Status: record.Status, Entries: []ReplayEntry{}, Children: childrenOf(tree.Children, nil)}
	for _, e := range record.Entries {
		out.Entries = append(out.Entries, ReplayEntry{Fact: e.Fact, Line: describe(e.Fact), Action: e.Action})
	}
	if verr := audit.VerifyLog(ctx, s.store, actor, id); verr != nil {
		out.Verdict = verr.Error()
	} else {
		out.Verified = true
		out.Verdict = present.Plural(len(record.Entries), "fact", "facts") + ": the hash chain is intact, every caused fact was enabled by the fold at its position, every action record is consistent"
		switch n := len(out.Children); {
		case n == 1:
			out.Verdict += "; the tree: 1 child thread verifies, its spawn has its child, and its report names the child's final head"
		case n > 1:
			out.Verdict += fmt.Sprintf("; the tree: %d child threads verify, each spawn has its child, and each report names its child's final head", n)
		}
	}
	return out, nil
}

// childrenOf appends the threads of a tree's children to ids, each after
// its parent.
func childrenOf(kids []audit.TreeAudit, ids []string) []string {
	for _, k := range kids {
		ids = append(ids, k.Thread)
		ids = childrenOf(k.Children, ids)
	}
	return ids
}

func (s *Server) apiReplay(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	rep, err := s.replay(r.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, rep)
}

// undoPlan is rewind.PlanUndo's plan of an undo to seq to.
func (s *Server) undoPlan(ctx context.Context, id string, to uint64) (rewind.UndoPlan, error) {
	st, err := s.inspect(ctx, id)
	if err != nil {
		return rewind.UndoPlan{}, err
	}
	if !s.here(st.Workspace) {
		return rewind.UndoPlan{}, fmt.Errorf("thread %s works in %s: %w; its files are there", id, st.Workspace, ErrNotHere)
	}
	rt, free, err := s.session.Runtime()
	if err != nil {
		return rewind.UndoPlan{}, err
	}
	defer free()
	return rewind.PlanUndo(ctx, rt, s.opts.Stock.Actor, id, to)
}

func (s *Server) apiUndo(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	to, err := seqParam(r, "to", 0)
	if err != nil {
		return err
	}
	plan, err := s.undoPlan(r.Context(), id, to)
	if refused, ok := undoRefused(err, plan); ok {
		return writeJSON(w, http.StatusConflict, refused)
	}
	if err != nil {
		return badRequestIf(err)
	}
	return writeJSON(w, http.StatusOK, plan)
}

// UndoRefused is the answer (409) to an undo, or its preview, that
// refuses paths: the error, its code (undo_refused), each refused path
// and why, and the plan of the paths that could be restored.
type UndoRefused struct {
	Error     string                `json:"error"`
	Code      string                `json:"code"`
	Conflicts []rewind.UndoConflict `json:"conflicts"`
	Plan      rewind.UndoPlan       `json:"plan"`
}

// undoRefused is the answer to an undo that err refused, with its plan;
// false when err is not an *rewind.UndoError.
func undoRefused(err error, plan rewind.UndoPlan) (UndoRefused, bool) {
	var ue *rewind.UndoError
	if !errors.As(err, &ue) {
		return UndoRefused{}, false
	}
	if plan.Steps == nil {
		plan.Steps = []rewind.UndoStep{}
	}
	return UndoRefused{Error: err.Error(), Code: "undo_refused", Conflicts: ue.Conflicts, Plan: plan}, true
}

// badRequestIf makes an error of bad input a bad request; others pass.
func badRequestIf(err error) error {
	if status, _ := statusOf(err); status == http.StatusInternalServerError && strings.Contains(err.Error(), "past the thread's last fact") {
		return badRequest("%v", err)
	}
	return err
}

// ForkPreview is what a fork at a seq would be: its id, and the view of
// the log up to there — the one a fork starts from.
type ForkPreview struct {
	Thread string         `json:"thread"`
	At     uint64         `json:"at"`
	Fork   string         `json:"fork"`
	Status harness.Status `json:"status"`
	Waits  []WaitSummary  `json:"waits,omitempty"`
	// Exists is true when a thread with the fork's id exists already.
	Exists bool `json:"exists"`
}

// forkPreview folds the thread's log up to at through the actor, as the
// fork would fold it.
func (s *Server) forkPreview(ctx context.Context, id string, at uint64) (ForkPreview, error) {
	h, err := s.store.Head(ctx, id)
	if err != nil {
		return ForkPreview{}, err
	}
	if at < 1 || at > h.Seq {
		return ForkPreview{}, badRequest("?at=%d: want a seq from 1 to %d", at, h.Seq)
	}
	fd := fold.New(s.opts.Stock.Actor.New()...)
	for f, err := range s.store.Read(ctx, id, 1) {
		if err != nil {
			return ForkPreview{}, err
		}
		if f.Seq > at {
			break
		}
		if err := fd.Step(f); err != nil {
			return ForkPreview{}, err
		}
	}
	v, err := harness.Folded{ID: id, Fold: fd}.View()
	if err != nil {
		return ForkPreview{}, err
	}
	p := ForkPreview{Thread: id, At: at, Fork: rewind.ForkID(id, at), Status: v.Status}
	for _, w := range v.Waits {
		ref := w.RequestID
		if w.Thread != "" {
			ref = w.Thread + "/" + w.RequestID // as drive.Ref names a child's
		}
		p.Waits = append(p.Waits, WaitSummary{Kind: w.Kind, RequestID: w.RequestID, Thread: w.Thread, Ref: ref, Summary: w.Summary})
	}
	if _, err := s.store.Head(ctx, p.Fork); err == nil {
		p.Exists = true
	}
	return p, nil
}

func (s *Server) apiFork(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	at, err := seqParam(r, "at", 0)
	if err != nil {
		return err
	}
	p, err := s.forkPreview(r.Context(), id, at)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, p)
}

func (s *Server) apiEffects(w http.ResponseWriter, r *http.Request) error {
	es, err := audit.Effects(r.Context(), s.reader, s.opts.Stock.Actor)
	if err != nil {
		return err
	}
	if es == nil {
		es = []audit.Effect{}
	}
	return writeJSON(w, http.StatusOK, es)
}

// apiSearch answers a search (drive.Search) with the one search document.
func (s *Server) apiSearch(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	o := drive.SearchOptions{Cursor: q.Get("page")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > search.MaxLimit {
			return badRequest("?limit=%q: want a number from 1 to %d", v, search.MaxLimit)
		}
		o.Limit = n
	}
	res, err := s.search(r.Context(), q.Get("q"), o)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

// search is drive.Search on the server's store, each thread's status read
// from its kept fold. The index is opened for the search and closed after
// it, so that a harness search beside the server can open it too.
func (s *Server) search(ctx context.Context, query string, o drive.SearchOptions) (drive.SearchResult, error) {
	ix, err := s.opts.Stock.Place.OpenSearch(ctx, search.DefaultWait)
	if err != nil {
		return drive.SearchResult{}, err
	}
	defer ix.Close()
	o.Inspect = s.inspect
	return drive.Search(ctx, s.reader, s.opts.Stock.Actor, ix, query, o)
}
