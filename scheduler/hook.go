package scheduler

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// Hooks run at the boundary of every tool call, built-in, MCP or
// delegation alike, because the scheduler enables them where every call
// passes. The hooks in force are the ones the thread's system.configured
// records (facts.Hook); a hook's run is a hook.ran fact, and the fold reads
// its decision from that fact, never by running it again:
//
//	action.requested (or, for a delegation, the model turn)
//	→ hook.ran before_tool      one per matching hook, in order, until one
//	                            denies or fails: the call is then completed
//	                            unrun, denied, with the hook's reason (a
//	                            delegation spawns no child)
//	→ confirmation.requested    when the policy asks, or a hook asked (its
//	                            reason on the request); a user-scope hook's
//	                            approve is named on it for the policy
//	→ … action.completed
//	→ hook.ran after_tool       one per matching hook: what it adds is shown
//	                            to the model with the call's result
//
// and around the thread: session_start before its first model turn (what
// a hook adds is shown to the model after the task), parked once for each
// request it waits on (a notification: its decision is not read), and
// thread_end each time it is done (once per model turn it ended at). Their
// keys name the thread ("thread"), the request, or the turn ("turn-N").
//
// A hook's key is "hook/<event>/<call or action>/<index>": a hook recorded
// is not run again for that call. A process that dies after a hook exited
// and before its fact was appended runs that one hook again on resume.

// HookInput is the document a hook reads on its stdin: the event, the
// thread, the seq of the fact it is about, the call and, after a tool, its
// result. The runtime adds the workspace (cwd).
type HookInput struct {
	Event  string          `json:"event"`
	Thread string          `json:"thread"`
	Seq    uint64          `json:"seq"`
	Call   string          `json:"call_id,omitempty"`
	Tool   string          `json:"tool_name,omitempty"`
	Args   json.RawMessage `json:"tool_input,omitempty"`
	Result *HookResult     `json:"tool_result,omitempty"`
	// Wait is what a parked thread waits for (event parked).
	Wait *fold.Wait `json:"wait,omitempty"`
	// Turns is the thread's model turns so far (session_start, parked,
	// thread_end).
	Turns int    `json:"turns,omitempty"`
	Cwd   string `json:"cwd,omitempty"`
}

// HookResult is a completed call as an after_tool hook reads it: the
// report's status and error, what it printed, its exit code, the effect
// state, and the text the model is shown.
type HookResult struct {
	Status   facts.ReportStatus `json:"status"`
	Error    string             `json:"error,omitempty"`
	Stdout   string             `json:"stdout,omitempty"`
	Stderr   string             `json:"stderr,omitempty"`
	ExitCode int                `json:"exit_code,omitempty"`
	Effect   facts.EffectState  `json:"effect,omitempty"`
	Text     string             `json:"text"`
}

func hookKey(event, of string, i int) string {
	return "hook/" + event + "/" + of + "/" + strconv.Itoa(i)
}

// MatchHook reports whether a hook's matcher takes a call of tool: ""
// and "*" every tool, else any of its '|'-separated globs ("write_file|
// edit_file", "mcp__github__*").
func MatchHook(matcher, tool string) bool {
	if matcher == "" {
		return true
	}
	for _, m := range strings.Split(matcher, "|") {
		if ok, err := path.Match(strings.TrimSpace(m), tool); err == nil && ok {
			return true
		}
	}
	return false
}

// hooksFor are the indexes of the recorded hooks of event that take tool.
func (s *state[S]) hooksFor(event, tool string) []int {
	var out []int
	for i, h := range s.system.Hooks {
		if h.Event == event && MatchHook(h.Matcher, tool) {
			out = append(out, i)
		}
	}
	return out
}

// nextHook is the first of the hooks of event that take tool and have no
// record among ran; -1 when every one has.
func (s *state[S]) nextHook(event, tool string, ran []facts.HookRan) int {
	for _, i := range s.hooksFor(event, tool) {
		done := false
		for _, r := range ran {
			done = done || r.Hook == i
		}
		if !done {
			return i
		}
	}
	return -1
}

// hookGate is what the before_tool hooks of a call decided: pending
// (a hook is still to run), a denial (its reason; a failure denies), an
// ask (its reason) or the user-scope hook that approved.
type hookGate struct {
	pending    int // the next hook to run; -1 when none is
	deny       string
	ask        string
	approvedBy string
}

// gate reads the before_tool records of c.
func (s *state[S]) gate(c *call) hookGate {
	g := hookGate{pending: -1}
	for _, r := range c.hooks {
		who := fmt.Sprintf("hook %s (%s)", r.Name, r.Scope)
		if r.Args != "" {
			// An approve was of the arguments its hook was given: a
			// later rewrite (a trusted project's hook runs after yours)
			// is not approved by it.
			g.approvedBy = ""
		}
		switch r.Decision {
		case facts.HookDeny:
			g.deny = fmt.Sprintf("denied by %s: %s", who, orSaid(r.Reason, "no reason given"))
		case facts.HookFailed:
			g.deny = fmt.Sprintf("denied: %s failed (%s), and a before_tool hook that fails denies the call", who, orSaid(r.Reason, "no reason given"))
		case facts.HookAsk:
			if g.ask == "" {
				g.ask = fmt.Sprintf("%s asks: %s", who, orSaid(r.Reason, "confirm this call"))
			}
		case facts.HookApprove:
			// The fact's own check already refuses an approve from
			// another scope; a fold reads only what a user's hook said.
			if r.Scope == "user" && g.approvedBy == "" {
				g.approvedBy = r.Name
			}
		}
	}
	if g.deny == "" {
		g.pending = s.nextHook(facts.HookBeforeTool, c.call.Name, c.hooks)
	}
	return g
}

func orSaid(s, otherwise string) string {
	if strings.TrimSpace(s) == "" {
		return otherwise
	}
	return s
}

// beforeHook enables the run of hook i before call c.
func (s *state[S]) beforeHook(c *call, i int, seq uint64) fold.Transition[S] {
	in := HookInput{Event: facts.HookBeforeTool, Thread: s.thread, Seq: seq, Call: c.ref, Tool: c.call.Name, Args: argsJSON(c.args())}
	return s.hookRun(hookKey(facts.HookBeforeTool, c.ref, i), i, in)
}

// afterHook enables the run of hook i after action a of call c: it is
// given the arguments the call ran with (a before_tool hook's rewrite).
func (s *state[S]) afterHook(c *call, a *Action, i int) fold.Transition[S] {
	r := a.Completed.Report
	res := &HookResult{Status: r.Status, Error: r.Error, Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ExitCode,
		Effect: a.Completed.EffectState, Text: ToolResult(*a.Completed, a.Check)}
	in := HookInput{Event: facts.HookAfterTool, Thread: s.thread, Seq: a.CompletedSeq, Call: a.ID, Tool: c.call.Name,
		Args: argsJSON(c.args()), Result: res}
	return s.hookRun(hookKey(facts.HookAfterTool, a.ID, i), i, in)
}

func (s *state[S]) hookRun(key string, i int, in HookInput) fold.Transition[S] {
	h := s.system.Hooks[i]
	if s.env.Hook == nil {
		// No runner: the hook cannot run, which is its failure, recorded.
		return fold.Transition[S]{Key: key, Effect: drafts[S](facts.KindHookRan, facts.HookRan{Event: in.Event, Hook: i, Name: h.Name,
			Scope: h.Scope, Digest: h.Digest, Call: in.Call, Tool: in.Tool, Input: "none", Exit: -1, Decision: facts.HookFailed,
			Reason: "no hook runner: hooks cannot run here"})}
	}
	return fold.Transition[S]{Key: key, Effect: effect.AndThen(s.env.Hook(i, h, in), func(p facts.HookRan) effect.Effect[S, []facts.Draft] {
		p.Event, p.Hook, p.Name, p.Scope, p.Digest, p.Call, p.Tool = in.Event, i, h.Name, h.Scope, h.Digest, in.Call, in.Tool
		if p.Args != "" {
			p.ArgsDigest = argsDigest(in.Args)
		}
		return drafts[S](facts.KindHookRan, p)
	})}
}

// argsJSON is a call's arguments as JSON: as written when they are
// JSON, else as a JSON string.
func argsJSON(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}

// threadHooks adds to out the hooks of the thread's own events that are
// due: session_start in place of the first model turn, parked when the
// thread waits and nothing is enabled, thread_end when it is done.
func (s *state[S]) threadHooks(out *fold.Output[S], v View) {
	if len(s.system.Hooks) == 0 {
		return
	}
	in := HookInput{Thread: s.thread, Seq: s.head, Turns: s.turns}
	switch {
	case v.Phase == PhaseInfer && s.turns == 0 && !s.sawTurn && out.Stop == nil:
		if i := s.nextHook(facts.HookSessionStart, "", s.runsOf(facts.HookSessionStart, "thread")); i >= 0 {
			in.Event, in.Call = facts.HookSessionStart, "thread"
			out.Transitions = []fold.Transition[S]{s.hookRun(hookKey(in.Event, in.Call, i), i, in)}
		}
	case len(out.Transitions) > 0:
	case len(out.Waits) > 0:
		for _, w := range out.Waits {
			if w.Kind == fold.WaitChild {
				continue // the child parks, and its hooks say so
			}
			if i := s.nextHook(facts.HookParked, "", s.runsOf(facts.HookParked, w.RequestID)); i >= 0 {
				in.Event, in.Call = facts.HookParked, w.RequestID
				wait := w
				in.Wait = &wait
				out.Transitions = append(out.Transitions, s.hookRun(hookKey(in.Event, in.Call, i), i, in))
			}
		}
	case out.Stop == nil && v.Phase == PhaseDone:
		call := "turn-" + strconv.Itoa(s.turns)
		if i := s.nextHook(facts.HookThreadEnd, "", s.runsOf(facts.HookThreadEnd, call)); i >= 0 {
			in.Event, in.Call = facts.HookThreadEnd, call
			out.Transitions = append(out.Transitions, s.hookRun(hookKey(in.Event, in.Call, i), i, in))
		}
	}
}

// runsOf are the recorded runs of the thread's own event for call.
func (s *state[S]) runsOf(event, call string) []facts.HookRan {
	var out []facts.HookRan
	for _, r := range s.ownHooks {
		if r.Event == event && r.Call == call {
			out = append(out, r)
		}
	}
	return out
}

// hookRan folds a hook's run: before a call, its decision gates the
// call; after one, what it adds is shown to the model with the result.
func (s *state[S]) hookRan(f facts.Fact, p facts.HookRan) {
	switch p.Event {
	case facts.HookBeforeTool:
		c := s.byRef[p.Call]
		if c == nil {
			s.missedRef(p.Call)
			s.missed = true
			return
		}
		c.hooks = append(c.hooks, p)
	case facts.HookAfterTool:
		c, a := s.attemptOf(p.Call)
		if a == nil {
			s.missed = true
			return
		}
		a.Hooks = append(a.Hooks, p)
		if note := hookNote(p); note != "" && a.Completed != nil {
			s.addToResult(c, a.CompletedSeq, note)
		}
	default:
		s.ownHooks = append(s.ownHooks, p)
		if p.Event == facts.HookSessionStart {
			if note := hookNote(p); note != "" {
				s.say(facts.Message{Role: facts.RoleUser, Text: note, Seq: f.Seq})
			}
		}
	}
}

// hookNote is what the model is shown of an after_tool hook's run.
func hookNote(p facts.HookRan) string {
	who := fmt.Sprintf("hook %s (%s)", p.Name, p.Scope)
	switch {
	case p.Decision == facts.HookFailed && p.Event == facts.HookSessionStart:
		return ""
	case p.Decision == facts.HookFailed:
		return fmt.Sprintf("[%s failed: %s]", who, p.Reason)
	case p.Decision == facts.HookDeny && p.Reason != "":
		return fmt.Sprintf("[%s: %s]", who, p.Reason)
	case p.Context != "":
		return fmt.Sprintf("[%s] %s", who, p.Context)
	}
	return ""
}

// addToResult appends note to the tool message of call c recorded at seq.
func (s *state[S]) addToResult(c *call, seq uint64, note string) {
	s.editToolMessage(func(m facts.Message) bool { return m.ToolCallID == c.call.ID && m.Seq == seq },
		func(m *msg) { m.Text += "\n" + note })
}

// checkHookRan is the verifier's question about a hook.ran: its hook is
// one the thread recorded, for its event, not run before for the same
// call, and cause is the key of its own run (or of a turn's hooks run side
// by side, see hooktogether.go, or of a call's after_tool hooks run side by
// side, see afterhooks.go).
func (s *state[S]) checkHookRan(cause string, p facts.HookRan) error {
	if own := hookKey(p.Event, p.Call, p.Hook); cause != own {
		check := s.checkTogether
		if p.Event == facts.HookAfterTool {
			check = s.checkAfterTogether
		}
		if err := check(cause, p); err != nil {
			return fmt.Errorf("hook.ran of hook %d (%s) for %s under %s, which is not its key (%s): %w", p.Hook, p.Name, p.Call, cause, own, err)
		}
	}
	if p.Hook < 0 || p.Hook >= len(s.system.Hooks) {
		return fmt.Errorf("hook.ran names hook %d; the thread records %d", p.Hook, len(s.system.Hooks))
	}
	if h := s.system.Hooks[p.Hook]; h.Event != p.Event || h.Name != p.Name || h.Scope != p.Scope {
		return fmt.Errorf("hook.ran names hook %d as %s %s (%s); the thread records %s %s (%s)", p.Hook, p.Event, p.Name, p.Scope, h.Event, h.Name, h.Scope)
	}
	var ran []facts.HookRan
	switch p.Event {
	case facts.HookBeforeTool:
		c := s.byRef[p.Call]
		if c == nil {
			s.missedRef(p.Call)
			return fmt.Errorf("hook.ran before call %s, which is no call of the thread", p.Call)
		}
		ran = c.hooks
	case facts.HookAfterTool:
		_, a := s.attemptOf(p.Call)
		if a == nil || a.Completed == nil {
			return fmt.Errorf("hook.ran after action %s, which did not complete", p.Call)
		}
		ran = a.Hooks
	default:
		ran = s.runsOf(p.Event, p.Call)
	}
	for _, r := range ran {
		if r.Hook == p.Hook {
			return fmt.Errorf("hook %d (%s) ran again for %s", p.Hook, p.Name, p.Call)
		}
	}
	if p.Event == facts.HookBeforeTool {
		// A call's hooks run in order, until one denies: the run is of
		// the one due (whether alone or side by side with other calls').
		switch due := s.gate(s.byRef[p.Call]).pending; {
		case due < 0:
			return fmt.Errorf("hook %d (%s) ran before %s, which waits on no hook", p.Hook, p.Name, p.Call)
		case due != p.Hook:
			return fmt.Errorf("hook %d (%s) ran before %s, whose next hook is %d", p.Hook, p.Name, p.Call, due)
		}
	}
	return nil
}
