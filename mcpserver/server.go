package mcpserver

import (
	"reflect"
	"sync"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/google/jsonschema-go/jsonschema"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/tools"
)

// Workspace is where the threads a server offers live. The server opens
// it for one request at a time and closes it after, holding no store in
// between, so that a person's own harness commands (an approval at a
// terminal) work while a client is connected.
type Workspace interface {
	Open(ctx context.Context, req OpenRequest) (*Opened, error)
}

// OpenRequest says what a request needs of the workspace.
type OpenRequest struct {
	// Drive: the request may run a thread (its tools, its MCP servers,
	// its model); otherwise it only reads or posts.
	Drive bool
	// Create: a store is made if there is none (a first thread).
	Create bool
	// Model is the model spec a thread started by the request records
	// ("" for the workspace's default).
	Model string
}

// Opened is a workspace opened for one request.
type Opened struct {
	Runtime *harness.Runtime
	Actor   harness.Actor
	// Drive is how a thread is driven: the workspace's approval policy
	// (Approval, or a Go drive.Policy whose answers are recorded by its
	// name) and how its model is loaded. Ask must be nil: nobody waits at
	// a prompt, and a thread that needs a person parks.
	Drive drive.Options
	// Close closes what Open opened.
	Close func() error
	// AnswerPending, when set, posts an approval that carries an
	// "always" rule (drive.Reply.Always, and Project): the rule added to
	// the thread's policy (and, for the project, kept in the person's
	// own configuration) before the approval, as stock.Session.
	// AnswerPending does. Nil: the workspace keeps no rules, and an
	// answer with one is refused.
	AnswerPending func(ctx context.Context, th *harness.Thread, p drive.Pending, r drive.Reply) (harness.Posted, error)
}

// ServerOptions configure NewServer.
type ServerOptions struct {
	// ClientApproves says the client's answers are a person's: a client
	// that asks its person before each call of the answer tool, as Claude
	// Code does unless told otherwise. Only then may an answer approve a
	// confirmation or settle an effect nobody could vouch for; without it
	// those stay with a person at harness's own prompt or commands, and
	// the client may still deny a call and answer the thread's questions.
	ClientApproves bool
	// Version names the harness to clients.
	Version string
	// PersonAnswers, when set, is how a person answers the open request p
	// of thread outside this server (the front end that runs the server
	// knows its commands): what a refusal to approve or settle tells the
	// client to have its person do. Nil names no command.
	PersonAnswers func(thread string, p drive.Pending) string
	// Person, when set, is the person a call comes from as the front end
	// knows it (over HTTP: the name the request's token names), or "".
	// An answer is then recorded as that person's, through the client,
	// never under a name the call gives.
	Person func(req *sdk.CallToolRequest) string
}

// NewServer is harness as an MCP server: its tools start a thread, say
// where one stands, list its facts, answer what it waits for (an approval
// bound to the digest of the exact call), resume it, and replay and
// verify its log. Every thread runs under the workspace's approval policy
// alone: the server approves nothing on its caller's behalf.
func NewServer(ws Workspace, opts ServerOptions) *sdk.Server {
	srv, _ := newServer(ws, opts)
	return srv
}

// newServer is NewServer's server, and the state its handlers share.
func newServer(ws Workspace, opts ServerOptions) (*sdk.Server, *server) {
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s := &server{ws: ws, opts: opts, watch: newWatcher(ws)}
	srv := sdk.NewServer(&sdk.Implementation{Name: "harness", Version: version}, &sdk.ServerOptions{
		// Declared exactly as served: tools (a list that never changes),
		// logging (a thread's facts as they are appended, see logFacts),
		// resources (the threads, their state and facts; subscribe: a
		// fact appended to a thread is notifications/resources/updated,
		// see watcher; no list_changed is sent) and prompts (a list that
		// never changes). No completions: that method is not found.
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}, Logging: &sdk.LoggingCapabilities{},
			Resources: &sdk.ResourceCapabilities{Subscribe: true}, Prompts: &sdk.PromptCapabilities{}},
		// Revision 2025-11-25 and those before it: not the SDK's draft
		// (2026-07-28), whose subscriptions/listen and per-request
		// metadata this server has not been checked against.
		SupportedProtocolVersions: servedVersions(),
		SubscribeHandler:          s.subscribe,
		UnsubscribeHandler:        s.unsubscribe,
		Instructions: "harness runs coding agents as durable, audited threads in this workspace. Start a thread with start; " +
			"a tool call that needs a person parks the thread: view shows what it waits for, with the digest of the exact call. " +
			"Answers go through answer (an approval must name that digest); resume goes on; replay verifies the log. " +
			"Each thread is the resource harness://threads/ID (its state; subscribe to be told of each fact appended) " +
			"and harness://threads/ID/facts (its facts, a page at a time).",
	})
	s.watch.srv = srv
	srv.AddReceivingMiddleware(served, s.listing)
	srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: ThreadTemplate, Name: "thread", Title: "A thread's state",
		Description: "Where the thread stands: the one document every harness front end gives (as GET /api/threads/{id}/state): status, open requests with the digest of each call, the next step.",
		MIMEType:    "application/json"}, s.readResource)
	srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: FactsTemplate, Name: "facts", Title: "A thread's facts",
		Description: fmt.Sprintf("The thread's facts (its log) in order, as JSON {thread, facts, next}: those after seq after, at most limit (default and most %d) and about %d bytes; next is the URI of the next page.", FactsPage, FactsBytes),
		MIMEType:    "application/json"}, s.readResource)
	s.addPrompts(srv)
	yes, no := true, false
	sdk.AddTool(srv, &sdk.Tool{Name: "start", Description: "Start a thread with a task for the coding agent and run it until it is done or waits for a person (a confirmation, a question). Returns where it stands.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no}}, s.start)
	sdk.AddTool(srv, &sdk.Tool{Name: "view", Description: "Where a thread stands: done, parked (and on what: each open request with its digest and how to answer), failed.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}}, s.view)
	sdk.AddTool(srv, &sdk.Tool{Name: "facts", Description: "A thread's facts (its log), in order, as JSON: seq, kind, cause, time, data.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}}, s.facts)
	sdk.AddTool(srv, &sdk.Tool{Name: "answer", InputSchema: answerSchema(), Description: "Answer what a thread waits for: approve or deny a confirmation (naming the digest view shows), answer a question (text), settle an open effect (decision: accept, retry, abandon), or act on a plan (approve: true) or ask for another (text). Then, unless resume is false, run the thread on.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no}}, s.answer)
	s.addPlan(srv)
	sdk.AddTool(srv, &sdk.Tool{Name: "resume", Description: "Run a thread on until it is done or waits for a person. A parked thread runs nothing.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no}}, s.resume)
	sdk.AddTool(srv, &sdk.Tool{Name: "stop", Description: "Stop a thread: nothing more runs in it. A command it runs now, here or in another process, is cut off (SIGTERM, then SIGKILL) and recorded as interrupted. Returns where it stands.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no}}, s.stop)
	sdk.AddTool(srv, &sdk.Tool{Name: "replay", Description: "Tell a thread's record back (for each action its report, the runtime's own observation, the effect state and the check) and verify the log: the hash chain, and that every step was one the fold enabled.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}}, s.replay)
	return srv, s
}

// servedVersions are the protocol revisions the server speaks: the SDK's,
// up to 2025-11-25.
func servedVersions() []string {
	var vs []string
	for _, v := range sdk.SupportedProtocolVersions() {
		if v <= "2025-11-25" {
			vs = append(vs, v)
		}
	}
	return vs
}

// answerSchema is the answer tool's input schema: AnswerArgs's, with a
// drive.YesNo a JSON true, false or null (as a *bool would be), not the
// integer its Go type would make it.
// It is made at first use, not at start-up.
var answerSchema = sync.OnceValue(func() *jsonschema.Schema {
	sc, err := jsonschema.For[AnswerArgs](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[drive.YesNo](): {Types: []string{"null", "boolean"}},
	}})
	if err != nil {
		panic(err) // AnswerArgs is a plain struct
	}
	return sc
})

type server struct {
	ws    Workspace
	opts  ServerOptions
	watch *watcher
}

// ThreadArgs name a thread.
type ThreadArgs struct {
	Thread string `json:"thread" jsonschema:"the thread's id, as start returned it"`
}

// StartArgs are the start tool's.
type StartArgs struct {
	Task   string `json:"task" jsonschema:"what the coding agent is to do: the thread's first message"`
	Thread string `json:"thread,omitempty" jsonschema:"the new thread's id (default: t1, t2, … the next free one)"`
	Model  string `json:"model,omitempty" jsonschema:"the model: openai:MODEL, anthropic:MODEL or scripted:FILE (default: the workspace's)"`
}

// factsTool is how many facts the facts tool gives when no limit is
// named.
const factsTool = 200

// FactsToolView is the facts tool's answer: a page of the facts resource
// (FactsPageView), and whether there are more after it.
type FactsToolView struct {
	FactsPageView
	// More says the page ended before the log: Next names the rest
	// (the facts tool's after is the last fact's seq).
	More bool `json:"more,omitempty"`
}

// FactsArgs are the facts tool's.
type FactsArgs struct {
	Thread string `json:"thread" jsonschema:"the thread's id"`
	After  uint64 `json:"after,omitempty" jsonschema:"only the facts after this seq"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many facts (default 200, at most 500); a page is also bounded to about 1 MiB of JSON"`
}

// AnswerArgs are the answer tool's.
type AnswerArgs struct {
	Thread    string `json:"thread" jsonschema:"the thread's id"`
	RequestID string `json:"request_id" jsonschema:"the open request's id, as view shows it"`
	// A confirmation's answer.
	Approve drive.YesNo `json:"approve,omitempty" jsonschema:"for a confirmation: true approves the call, false denies it; for a plan: true acts on it"`
	Digest  string      `json:"digest,omitempty" jsonschema:"for a confirmation: the digest of the exact call, as view shows it; an approval of anything else is refused"`
	Reason  string      `json:"reason,omitempty" jsonschema:"why (recorded with the answer)"`
	Always  string      `json:"always,omitempty" jsonschema:"with approve true: also approve from now on what this rule matches in this thread (a pattern, as view offers it: run_command:go test *, write_file:PATH)"`
	Project bool        `json:"project,omitempty" jsonschema:"with always: keep the rule for this project too (in the person's own configuration, never in the workspace), for later threads here"`
	// A question's answer.
	Text string `json:"text,omitempty" jsonschema:"for a question: the answer; for a plan: what to plan instead (asks for another plan)"`
	// An MCP server's question (its request shows elicit).
	Elicit  string            `json:"elicit,omitempty" jsonschema:"for a question an MCP server asked during a call: accept, decline or cancel"`
	Content map[string]any    `json:"content,omitempty" jsonschema:"with elicit accept: the input, a JSON object the server's schema must validate"`
	Fields  map[string]string `json:"fields,omitempty" jsonschema:"with elicit accept: the input as text by field name, typed by the server's schema"`
	// A reconciliation.
	Decision string `json:"decision,omitempty" jsonschema:"for an open effect: accept, retry or abandon"`
	// A raise of the tree's budget (a person's word, as an approval is).
	USD    float64     `json:"usd,omitempty" jsonschema:"for a budget: US dollars to add to the tree's budget"`
	Tokens int64       `json:"tokens,omitempty" jsonschema:"for a budget: tokens to add to the tree's budget"`
	Turns  int64       `json:"turns,omitempty" jsonschema:"for a budget: model turns to add to the root's bound in model turns"`
	By     string      `json:"by,omitempty" jsonschema:"who answers (recorded; default: the MCP client's name)"`
	Resume drive.YesNo `json:"resume,omitempty" jsonschema:"run the thread on after the answer (default true)"`
}

// ThreadView is where a thread stands, for a client: its state — the one
// document every front end gives of a thread (drive.State) — with how to
// answer each request it waits for with this server's answer tool.
type ThreadView struct {
	drive.State
	// Answers say, for each open request (by its ref), how the answer
	// tool answers it.
	Answers map[string]string `json:"answers,omitempty"`
	// Posted, after an answer, says whether it was appended (false: the
	// same answer had been given).
	Posted drive.YesNo `json:"posted,omitempty"`
}

// ReplayView is a thread's record told back and verified.
type ReplayView struct {
	Thread   string `json:"thread"`
	Verified bool   `json:"verified"`
	// Problem says what does not verify.
	Problem string         `json:"problem,omitempty"`
	Facts   int            `json:"facts"`
	Status  harness.Status `json:"status"`
	// Actions are each action's report, observation, effect and check.
	Actions []ActionView `json:"actions,omitempty"`
}

// ActionView is one action of a replay.
type ActionView struct {
	ActionID string   `json:"action_id"`
	Tool     string   `json:"tool"`
	Report   string   `json:"report"`
	Error    string   `json:"error,omitempty"`
	Effect   string   `json:"effect"`
	Changed  []string `json:"changed,omitempty"`
	Check    string   `json:"check,omitempty"`
	Flag     string   `json:"flag,omitempty"`
}

// served lets through only the methods of what the server declares: a
// method of completion is not found (-32601), as for any other method
// the server does not have.
func served(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if strings.HasPrefix(method, "completion/") {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
				Message: fmt.Sprintf("method %q not found: this server offers tools, resources, prompts and logging", method)}
		}
		return next(ctx, method, req)
	}
}

// listing answers resources/list with the threads (listResources): the
// SDK's own list holds only resources added one by one.
func (s *server) listing(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if r, ok := req.(*sdk.ListResourcesRequest); ok && method == "resources/list" {
			return s.listResources(ctx, r)
		}
		return next(ctx, method, req)
	}
}

// open opens the workspace for one request of the session ss (nil: none
// to tell): what the request appends is told to the session's client as
// log messages (logFacts).
func (s *server) open(ctx context.Context, req OpenRequest, ss *sdk.ServerSession) (*Opened, error) {
	o, err := s.ws.Open(ctx, req)
	if err != nil {
		return nil, err
	}
	o.Drive.Ask = nil // nobody is at a prompt here
	// Every opening's appends are told to the watcher, subscribed to or
	// not: a client may subscribe while a request runs, and is then told
	// of what the request appends after (appended is a look at a map
	// when nobody is subscribed).
	if o.Runtime != nil {
		tell := func(f facts.Fact, err error) {
			if err == nil {
				s.watch.appended(f.Thread, f.Seq)
			}
		}
		if ss != nil {
			log := logFacts(ctx, ss)
			tell = func(f facts.Fact, err error) {
				log(f, err)
				if err == nil {
					s.watch.appended(f.Thread, f.Seq)
				}
			}
		}
		o.Runtime.Store = thread.Watch(o.Runtime.Store, tell)
	}
	return o, nil
}

// logFacts tells the client of ss each fact appended as a log message
// (notifications/message, logger "harness"), at the level the client
// set (logging/setLevel; none is sent before it sets one): a fact at
// info, a failure or an interruption at warning. Its data is the fact's
// thread, seq and kind, and the fact told in one line for a person.
// It is told also after the call's context ends: what a cancelled call
// appended (action.interrupted) is news too.
func logFacts(ctx context.Context, ss *sdk.ServerSession) func(facts.Fact, error) {
	ctx = context.WithoutCancel(ctx)
	return func(f facts.Fact, err error) {
		if err != nil {
			_ = ss.Log(ctx, &sdk.LoggingMessageParams{Level: "warning", Logger: "harness", Data: err.Error()})
			return
		}
		level := sdk.LoggingLevel("info")
		if k := string(f.Kind); strings.HasSuffix(k, ".failed") || strings.HasSuffix(k, ".interrupted") {
			level = "warning"
		}
		// A client that went away misses the rest; the thread's log keeps it.
		_ = ss.Log(ctx, &sdk.LoggingMessageParams{Level: level, Logger: "harness", Data: FactLog{
			Thread: f.Thread, Seq: f.Seq, Kind: string(f.Kind), Text: present.Describe(f)}})
	}
}

// FactLog is the data of the log message that tells a client of a fact
// appended while it waits for a call (or, with no kind, how a thread
// stands after its call was cancelled).
type FactLog struct {
	Thread string `json:"thread"`
	Seq    uint64 `json:"seq,omitempty"`
	Kind   string `json:"kind,omitempty"`
	// Text is the fact told for a person, in one line.
	Text string `json:"text"`
}

func (s *server) start(ctx context.Context, req *sdk.CallToolRequest, a StartArgs) (*sdk.CallToolResult, any, error) {
	if strings.TrimSpace(a.Task) == "" {
		return nil, nil, errors.New("task is empty: say what the coding agent is to do")
	}
	o, err := s.open(ctx, OpenRequest{Drive: true, Create: true, Model: a.Model}, session(req))
	if err != nil {
		return nil, nil, err
	}
	defer o.Close()
	var th *harness.Thread
	if a.Thread != "" {
		th = o.Runtime.Thread(o.Actor, a.Thread)
		if _, err := th.Start(ctx, a.Task); err != nil {
			return nil, nil, fmt.Errorf("start thread %s: %w", a.Thread, err)
		}
	} else {
		th, _, err = drive.StartNext(ctx, o.Runtime, o.Actor, a.Task, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("start a thread: %w", err)
		}
	}
	v, err := s.drive(ctx, o, th, session(req))
	if err != nil {
		return nil, nil, err
	}
	return nil, v, nil
}

// drive drives the thread on as the workspace says (Opened.Drive) and
// says where it then stands. A drive the client cancelled gets no
// response: the client of ss is told in a log message how the thread
// stands (resumable) instead.
func (s *server) drive(ctx context.Context, o *Opened, th *harness.Thread, ss *sdk.ServerSession) (ThreadView, error) {
	st, err := drive.Drive(ctx, th, o.Drive)
	if err != nil {
		err = fmt.Errorf("thread %s: %w", th.ID(), err)
		if ctx.Err() != nil && ss != nil {
			lctx := context.WithoutCancel(ctx)
			if ss.ID() != "" {
				// Over HTTP the client has stopped reading the call's
				// stream: the hint goes to the session's own (a context
				// of no request).
				lctx = context.Background()
			}
			_ = ss.Log(lctx, &sdk.LoggingMessageParams{Level: "warning", Logger: "harness",
				Data: FactLog{Thread: th.ID(), Text: err.Error() + " (or with the resume tool)"}})
		}
		return ThreadView{}, err
	}
	return viewOf(o, st), nil
}

func (s *server) view(ctx context.Context, _ *sdk.CallToolRequest, a ThreadArgs) (*sdk.CallToolResult, any, error) {
	o, th, err := s.thread(ctx, a.Thread, false, nil)
	if err != nil {
		return nil, nil, err
	}
	defer o.Close()
	st, err := drive.Inspect(ctx, th)
	if err != nil {
		return nil, nil, err
	}
	return nil, viewOf(o, st), nil
}

// thread opens the workspace and names an existing thread of it.
func (s *server) thread(ctx context.Context, id string, driving bool, ss *sdk.ServerSession) (*Opened, *harness.Thread, error) {
	if id == "" {
		return nil, nil, errors.New("name the thread (thread), as start returned it")
	}
	o, err := s.open(ctx, OpenRequest{Drive: driving}, ss)
	if err != nil {
		return nil, nil, err
	}
	if _, err := o.Runtime.Store.Head(ctx, id); err != nil {
		o.Close()
		return nil, nil, fmt.Errorf("thread %q: %w", id, err)
	}
	return o, o.Runtime.Thread(o.Actor, id), nil
}

func (s *server) facts(ctx context.Context, _ *sdk.CallToolRequest, a FactsArgs) (*sdk.CallToolResult, any, error) {
	o, _, err := s.thread(ctx, a.Thread, false, nil)
	if err != nil {
		return nil, nil, err
	}
	defer o.Close()
	limit := a.Limit
	if limit <= 0 || limit > FactsPage {
		limit = FactsPage
	}
	if a.Limit <= 0 {
		limit = factsTool
	}
	// One page as the facts resource gives it: at most limit facts and
	// about FactsBytes of JSON (a log of huge facts is not one answer).
	page, err := factsPage(ctx, o, a.Thread, a.After, limit)
	if err != nil {
		return nil, nil, err
	}
	raw, err := json.Marshal(FactsToolView{FactsPageView: page, More: page.Next != ""})
	if err != nil {
		return nil, nil, err
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(raw)}}}, nil, nil
}

// ErrPersonOnly: an answer only a person may give came from a client the
// server was not told answers for one.
var ErrPersonOnly = errors.New("approvals stay with a person")

func (s *server) answer(ctx context.Context, req *sdk.CallToolRequest, a AnswerArgs) (*sdk.CallToolResult, any, error) {
	if a.RequestID == "" {
		return nil, nil, errors.New("name the open request (request_id), as view shows it")
	}
	resume := a.Resume.Or(true)
	o, th, err := s.thread(ctx, a.Thread, resume, session(req))
	if err != nil {
		return nil, nil, err
	}
	defer o.Close()
	by := s.by(req, a.By)
	st, err := drive.Inspect(ctx, th)
	if err != nil {
		return nil, nil, err
	}
	var p *drive.Pending
	for i, w := range st.Waits {
		if drive.Ref(w) == a.RequestID || w.RequestID == a.RequestID {
			p = &st.Waits[i]
		}
	}
	if p == nil {
		return nil, nil, fmt.Errorf("thread %s has no open request %q (open: %s)", a.Thread, a.RequestID, openIDs(st))
	}
	reply, err := s.reply(a.Thread, *p, a, by)
	if err != nil {
		return nil, nil, err
	}
	post := drive.AnswerPending
	if reply.Always != "" {
		if post, err = alwaysPost(o, st); err != nil {
			return nil, nil, err
		}
	}
	ans, err := drive.AnswerThrough(ctx, th, reply, post)
	if err != nil {
		return nil, nil, err
	}
	posted := ans.Repeat == nil && !ans.Posted.Duplicate
	var v ThreadView
	if resume {
		v, err = s.drive(ctx, o, th, session(req))
	} else {
		st, err = drive.Inspect(ctx, th)
		v = viewOf(o, st)
	}
	if err != nil {
		return nil, nil, err
	}
	v.Posted = drive.YesNoOf(posted)
	return nil, v, nil
}

// reply is the reply a's arguments give to the open request p. Only a
// client whose answers are a person's (ServerOptions.ClientApproves) may
// approve a call or settle an effect.
func (s *server) reply(thread string, p drive.Pending, a AnswerArgs, by string) (drive.Reply, error) {
	r := drive.Reply{Kind: p.Kind, Request: a.RequestID, By: by, Reason: a.Reason}
	// how a person answers p instead: a command that works, or none.
	how := "at harness's own prompt, page or commands"
	if s.opts.PersonAnswers != nil {
		if c := s.opts.PersonAnswers(thread, p); c != "" {
			how = "with: " + c
		}
	}
	switch p.Kind {
	case fold.WaitConfirmation:
		switch {
		case !a.Approve.Said():
			return r, fmt.Errorf("%s is a confirmation: answer it with approve (true or false) and the digest %s", p.RequestID, p.Digest)
		case a.Digest == "":
			return r, fmt.Errorf("%s: name the digest of the call you answer (%s for %s %s): an answer is bound to the exact call", p.RequestID, p.Digest, p.Tool, p.Args)
		case a.Digest != p.Digest:
			return r, fmt.Errorf("%s: digest %s is not the call's (%s): the call waiting is %s %s", p.RequestID, a.Digest, p.Digest, p.Tool, p.Args)
		case a.Approve == drive.Yes && !s.opts.ClientApproves:
			return r, fmt.Errorf("%w: this server was not told that its client's answers are a person's, so it cannot approve %s %s; a person approves it %s (then resume it here), or it is denied here", ErrPersonOnly, p.Tool, p.Args, how)
		}
		r.Approved, r.Digest = a.Approve == drive.Yes, a.Digest
		switch {
		case a.Project && a.Always == "":
			return r, fmt.Errorf("%s: a rule for the project names its rule (always)", p.RequestID)
		case a.Always != "" && !r.Approved:
			return r, fmt.Errorf("%s: a rule (always) comes with an approval (approve true)", p.RequestID)
		case a.Always != "":
			if _, err := drive.ParsePattern(a.Always); err != nil {
				return r, fmt.Errorf("%s: always: %w", p.RequestID, err)
			}
			r.Always, r.Project = a.Always, a.Project
		}
	case fold.WaitQuestion:
		if p.Elicit != nil {
			r.Elicit, r.Fields = facts.ElicitAction(a.Elicit), a.Fields
			if err := r.Elicit.Validate(); err != nil {
				return r, fmt.Errorf("%s is the MCP server %s's question: answer it with elicit accept (and content or fields), decline or cancel: %w", p.RequestID, p.Elicit.Server, err)
			}
			if a.Content != nil {
				b, err := json.Marshal(a.Content)
				if err != nil {
					return r, fmt.Errorf("%s: content: %w", p.RequestID, err)
				}
				r.Content = b
			}
			if r.Elicit == facts.ElicitAccept && !s.opts.ClientApproves {
				return r, fmt.Errorf("%w: this server was not told that its client's answers are a person's, so it cannot give the MCP server %s the input it asks of a person; a person answers it %s, or decline it here", ErrPersonOnly, p.Elicit.Server, how)
			}
			break
		}
		if a.Text == "" {
			return r, fmt.Errorf("%s is a question (%s): answer it with text", p.RequestID, p.Summary)
		}
		r.Text = a.Text
	case fold.WaitReconcile:
		r.Decision = facts.Decision(a.Decision)
		if err := r.Decision.Validate(); err != nil {
			return r, fmt.Errorf("%s is an open effect (%s): answer it with decision accept, retry or abandon: %w", p.RequestID, p.Summary, err)
		}
		if !s.opts.ClientApproves {
			return r, fmt.Errorf("%w: this server was not told that its client's answers are a person's, so it cannot settle %s; a person settles it %s (then resume it here)", ErrPersonOnly, p.RequestID, how)
		}
	case fold.WaitBudget:
		// A raise lets the tree spend more: a person's word. It is the
		// tree's root's (drive.Answer refuses it on a child).
		r.USD, r.Tokens, r.Turns = a.USD, a.Tokens, a.Turns
		if err := (facts.BudgetRaised{Add: r.Raise()}).Validate(); err != nil {
			return r, fmt.Errorf("%s is the tree's budget (%s): raise it by usd, tokens or turns: %w", p.RequestID, p.Summary, err)
		}
		if !s.opts.ClientApproves {
			return r, fmt.Errorf("%w: this server was not told that its client's answers are a person's, so it cannot raise the budget of %s; a person raises it %s (then resume it here)", ErrPersonOnly, thread, how)
		}
	case fold.WaitPlan:
		// Acting on a plan lets the thread write: a person's word, as an
		// approval is. Asking for another plan is a message.
		switch {
		case a.Approve == drive.Yes && a.Text != "":
			return r, fmt.Errorf("%s is a plan (%s): act on it (approve true) or ask for another (text), not both", p.RequestID, p.Summary)
		case a.Approve == drive.Yes && !s.opts.ClientApproves:
			return r, fmt.Errorf("%w: this server was not told that its client's answers are a person's, so it cannot act on the plan %s; a person acts on it %s (then resume it here), or asks for another plan here (text)", ErrPersonOnly, p.RequestID, how)
		case a.Approve == drive.Yes:
			r.Approved = true
		case a.Text != "":
			r.Text = a.Text
		default:
			return r, fmt.Errorf("%s is a plan (%s): act on it with approve true, or ask for another plan with text", p.RequestID, p.Summary)
		}
	default:
		return r, fmt.Errorf("%s: a %s cannot be answered here", p.RequestID, p.Kind)
	}
	return r, nil
}

// alwaysPost is how an approval with an "always" rule is posted in the
// workspace o opened (Opened.AnswerPending), for a thread in state st: a
// rule for the project only for a thread of this workspace (the rule is
// kept for the workspace o opened, and must not come from a thread that
// works elsewhere).
func alwaysPost(o *Opened, st drive.State) (func(context.Context, *harness.Thread, drive.Pending, drive.Reply) (harness.Posted, error), error) {
	if o.AnswerPending == nil {
		return nil, ErrNoRules
	}
	return func(ctx context.Context, th *harness.Thread, p drive.Pending, r drive.Reply) (harness.Posted, error) {
		if r.Project && st.Workspace != "" && st.Workspace != o.Runtime.Config.Workspace {
			return harness.Posted{}, fmt.Errorf("thread %s works in %s, not in this server's workspace (%s): %w", th.ID(), st.Workspace, o.Runtime.Config.Workspace, ErrNotHere)
		}
		return o.AnswerPending(ctx, th, p, r)
	}, nil
}

// session is the session a call came in on, or nil.
func session(req *sdk.CallToolRequest) *sdk.ServerSession {
	if req == nil {
		return nil
	}
	return req.Session
}

// by is who an answer is recorded as given by: the person the front end
// knows the call comes from (ServerOptions.Person), else the name given,
// and the client it came through.
func (s *server) by(req *sdk.CallToolRequest, given string) string {
	client := "an MCP client"
	if req != nil && req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
			client = p.ClientInfo.Name
		}
	}
	if s.opts.Person != nil {
		if p := s.opts.Person(req); p != "" {
			given = p
		}
	}
	if given == "" {
		return "mcp:" + client
	}
	return given + " (via mcp:" + client + ")"
}

func (s *server) resume(ctx context.Context, req *sdk.CallToolRequest, a ThreadArgs) (*sdk.CallToolResult, any, error) {
	o, th, err := s.thread(ctx, a.Thread, true, session(req))
	if err != nil {
		return nil, nil, err
	}
	defer o.Close()
	o.Drive.Retry = true // a resume asked for is a word to go on
	v, err := s.drive(ctx, o, th, session(req))
	if err != nil {
		return nil, nil, err
	}
	return nil, v, nil
}

// StopArgs are the stop tool's.
type StopArgs struct {
	Thread string `json:"thread" jsonschema:"the thread's id"`
	Reason string `json:"reason,omitempty" jsonschema:"why (recorded with the stop)"`
	By     string `json:"by,omitempty" jsonschema:"who stops it (recorded; default: the MCP client's name)"`
}

// stop stops the thread (drive.Stop): stopping narrows what runs, so a
// client may do it without a person.
func (s *server) stop(ctx context.Context, req *sdk.CallToolRequest, a StopArgs) (*sdk.CallToolResult, any, error) {
	o, th, err := s.thread(ctx, a.Thread, false, nil)
	if err != nil {
		return nil, nil, err
	}
	defer o.Close()
	st, err := drive.Stop(ctx, th, s.by(req, a.By), a.Reason)
	if err != nil {
		return nil, nil, err
	}
	return nil, viewOf(o, st), nil
}

func (s *server) replay(ctx context.Context, _ *sdk.CallToolRequest, a ThreadArgs) (*sdk.CallToolResult, ReplayView, error) {
	o, _, err := s.thread(ctx, a.Thread, false, nil)
	if err != nil {
		return nil, ReplayView{}, err
	}
	defer o.Close()
	v := ReplayView{Thread: a.Thread, Verified: true}
	if err := audit.VerifyLog(ctx, o.Runtime.Store, o.Actor, a.Thread); err != nil {
		v.Verified, v.Problem = false, err.Error()
	}
	rec, err := audit.Replay(ctx, o.Runtime.Store, o.Actor, a.Thread)
	if err != nil {
		if !v.Verified {
			return nil, v, nil
		}
		return nil, ReplayView{}, err
	}
	v.Facts, v.Status = len(rec.Entries), rec.Status
	for _, e := range rec.Entries {
		if e.Action == nil {
			continue
		}
		av := ActionView{ActionID: e.Action.ActionID, Tool: e.Action.Tool, Report: string(e.Action.Report.Status),
			Error: e.Action.Report.Error, Effect: string(e.Action.EffectState), Flag: e.Action.Flag}
		for _, c := range e.Action.Observation.Changed {
			av.Changed = append(av.Changed, c.Path)
		}
		if c := e.Action.Check; c != nil {
			av.Check = fmt.Sprintf("%s %s: %s (%s)", c.Check.Name, c.Check.Target, c.Verdict, c.Reason)
		}
		v.Actions = append(v.Actions, av)
	}
	return nil, v, nil
}

// viewOf is a thread's state as a client sees it: the state, with the
// preview of each call to confirm when the thread works in the
// workspace o opened, and how to answer each request.
func viewOf(o *Opened, st drive.State) ThreadView {
	if rt := o.Runtime; st.Workspace == "" || st.Workspace == rt.Config.Workspace {
		st.Preview(rt.Services.Workspace, tools.Preview)
	}
	v := ThreadView{State: st}
	for _, w := range st.Waits {
		ref := drive.Ref(w)
		how := ""
		switch w.Kind {
		case fold.WaitConfirmation:
			how = fmt.Sprintf(`answer {"thread": %q, "request_id": %q, "approve": true|false, "digest": %q}`, st.Thread, ref, w.Digest)
			if o.AnswerPending != nil {
				// The rule a person is offered for it, as the prompt and
				// the page offer it (a command's prefix; the exact call
				// otherwise): theirs to take, edit or leave.
				rule := drive.ProjectAlways(o.Runtime.Config.Workspace, w.Tool, w.Args).String()
				how += fmt.Sprintf(`; a person's approval may add "always": %q (approves what it matches in this thread from now on) and "project": true (for later threads in this project too)`, rule)
			}
		case fold.WaitQuestion:
			how = fmt.Sprintf(`answer {"thread": %q, "request_id": %q, "text": "…"}`, st.Thread, ref)
			if w.Elicit != nil {
				how = fmt.Sprintf(`answer {"thread": %q, "request_id": %q, "elicit": "accept|decline|cancel", "content": {…}} (the MCP server %s asks, during a call: its words and schema, not harness's)`,
					st.Thread, ref, w.Elicit.Server)
			}
		case fold.WaitReconcile:
			how = fmt.Sprintf(`answer {"thread": %q, "request_id": %q, "decision": "accept|retry|abandon"}`, st.Thread, ref)
		case fold.WaitBudget:
			root := st.Root
			if root == "" {
				root = st.Thread
			}
			how = fmt.Sprintf(`answer {"thread": %q, "request_id": %q, "usd": …, "tokens": …, "turns": …} (a raise of the tree's budget, on its root)`, root, ref)
		case fold.WaitPlan:
			how = fmt.Sprintf(`answer {"thread": %q, "request_id": %q, "approve": true} acts on the plan (a person's word); answer {"thread": %q, "request_id": %q, "text": "…"} asks for another`, st.Thread, ref, st.Thread, ref)
		default:
			continue
		}
		if v.Answers == nil {
			v.Answers = map[string]string{}
		}
		v.Answers[ref] = how
	}
	return v
}

func openIDs(st drive.State) string {
	if len(st.Waits) == 0 {
		return "none"
	}
	ids := make([]string, len(st.Waits))
	for i, w := range st.Waits {
		ids[i] = drive.Ref(w)
	}
	return strings.Join(ids, ", ")
}
