package present

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/seed-7cc7a084/harness/facts"
)

// Describe says in one line, for a person, what a fact records: the text
// of a message, the calls of a model turn, an action's report, observation
// and effect state side by side, a check's verdict. It reads only the
// fact. A payload that does not decode is described as such, not hidden.
//
// Control characters in what the fact says (an escape sequence in a
// model's text, a carriage return in a path) are shown escaped (see
// EscapeLine), so the line cannot hide or rewrite anything on a terminal.
func Describe(f facts.Fact) string {
	s, err := describe(f)
	if err != nil {
		return EscapeLine(fmt.Sprintf("(payload does not decode: %v)", err))
	}
	return EscapeLine(s)
}

// EscapeLine returns s for a terminal, on one line: every control
// character but tab is shown as an escape — \r, \n, \x1b, \u202e — as are
// bytes that are not UTF-8, so that printing s cannot move the cursor,
// erase or overwrite a line, or reorder the text around it.
func EscapeLine(s string) string { return escape(s, false) }

// EscapeText is EscapeLine but keeps line feeds: for text shown as lines,
// such as a diff.
func EscapeText(s string) string { return escape(s, true) }

func escape(s string, keepNewlines bool) string {
	clean := func(r rune) bool {
		return r == '\t' || (keepNewlines && r == '\n') || !isControl(r)
	}
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || !clean(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case clean(r):
			b.WriteString(s[i : i+n])
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x100:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
		i += n
	}
	return b.String()
}

// isControl reports whether r does something on a terminal rather than
// show: the C0 and C1 controls, DEL, and the marks and overrides that
// change the direction of the text around them.
func isControl(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

func describe(f facts.Fact) (string, error) {
	switch f.Kind {
	case facts.KindUserMessage:
		p, err := facts.Decode[facts.UserMessage](f)
		if p.Served != nil {
			return fmt.Sprintf("%s · served from %s seq %d: the original's, after the same turn", quote(p.Text, 100), p.Served.Thread, p.Served.Seq), err
		}
		return quote(p.Text, 100), err
	case facts.KindSystemConfigured:
		p, err := facts.Decode[facts.SystemConfigured](f)
		names := make([]string, len(p.Tools))
		for i, t := range p.Tools {
			names[i] = t.Name
		}
		s := fmt.Sprintf("model %s; tools %s; %s", orNone(p.Model), orNone(strings.Join(names, ", ")), orNone(p.Version))
		if p.Sandbox != nil {
			s += "; commands " + Sandbox(*p.Sandbox)
		}
		if c := p.Context; c != nil {
			s += describeBounds(*c)
		}
		if len(p.Settings) > 0 {
			s += "; " + SettingsSources(p.Settings)
		}
		if len(p.Hooks) > 0 {
			hooks := make([]string, len(p.Hooks))
			for i, h := range p.Hooks {
				hooks[i] = fmt.Sprintf("%s %s (%s)", h.Event, h.Name, h.Scope)
			}
			s += "; hooks " + strings.Join(hooks, ", ")
			if p.HooksTogether && hasHook(p.Hooks, facts.HookBeforeTool) {
				s += " (a turn's before_tool hooks side by side)"
			}
			if p.AfterHooksTogether && hasHook(p.Hooks, facts.HookAfterTool) {
				s += " (a call's after_tool hooks side by side)"
			}
		}
		if w := p.Worktree; w != nil {
			s += fmt.Sprintf("; works in its own worktree %s (branch %s, base %.12s)", EscapeLine(w.Path), EscapeLine(w.Branch), w.Base)
		}
		if p.WorktreeError != "" {
			s += "; works in the workspace: no worktree of its own (" + quote(p.WorktreeError, 200) + ")"
		}
		if p.WorktreeMerge == facts.WorktreeMergeBranch {
			s += "; its end leaves its work on its branch"
		}
		return s, err
	case facts.KindWorktreeFinished:
		p, err := facts.Decode[facts.WorktreeResult](f)
		return DescribeWorktreeResult(p), err
	case facts.KindModelTurn:
		p, err := facts.Decode[facts.ModelTurn](f)
		return describeTurn(p), err
	case facts.KindModelSampled:
		p, err := facts.Decode[facts.ModelSampled](f)
		return describeSampled(p), err
	case facts.KindActionRequested:
		p, err := facts.Decode[facts.ActionRequested](f)
		s := fmt.Sprintf("%s %s (%s) by %s", p.ActionID, p.Adapter, p.Capability, orNone(p.RequestedBy))
		if p.Check != nil {
			s += " · check " + describeCheck(*p.Check)
		}
		if p.MCP != nil {
			s += fmt.Sprintf(" · MCP %s/%s (%s)", p.MCP.Server, p.MCP.Tool, p.MCP.Transport)
		}
		if p.Sandbox != nil {
			s += " · " + Sandbox(*p.Sandbox)
		}
		if p.Refused != "" {
			s += " · refused without asking: " + shorten(p.Refused, 100)
		}
		if p.Served != nil {
			s += fmt.Sprintf(" · served from %s seq %d: nothing runs, nobody is asked", p.Served.Thread, p.Served.Seq)
		}
		return s, err
	case facts.KindConfirmationRequested:
		p, err := facts.Decode[facts.ConfirmationRequested](f)
		s := fmt.Sprintf("%s waits for a person: %s %s", p.RequestID, p.Tool, shorten(p.Args, 100))
		if p.Hook != "" {
			s += " · " + shorten(p.Hook, 160)
		}
		if p.ApprovedBy != "" {
			s += " · approved by your hook " + p.ApprovedBy
		}
		return s, err
	case facts.KindConfirmationAnswered:
		p, err := facts.Decode[facts.ConfirmationAnswered](f)
		verb := "denied"
		if p.Approved {
			verb = "approved"
		}
		s := fmt.Sprintf("%s %s by %s", p.RequestID, verb, orNone(p.By))
		if p.Then == facts.DenyStop {
			s += ", who stopped the thread"
		}
		if p.Reason != "" {
			s += ": " + quote(p.Reason, 80)
		}
		if p.Then == facts.DenyContinue {
			s += " (the model is told)"
		}
		return s, err
	case facts.KindPolicySet:
		p, err := facts.Decode[facts.PolicySet](f)
		return DescribePolicy(p), err
	case facts.KindContextBoundsSet:
		p, err := facts.Decode[facts.ContextBoundsSet](f)
		s := fmt.Sprintf("context window %d", p.Bounds.Window)
		if p.Bounds.Window == 0 {
			s = "context window not known"
		}
		if p.Bounds.CompactAt > 0 {
			s += fmt.Sprintf(", compact past %d", p.Bounds.CompactAt)
		}
		if p.By != "" {
			s += " by " + quote(p.By, 40)
		}
		return s, err
	case facts.KindQuestionAsked:
		p, err := facts.Decode[facts.QuestionAsked](f)
		s := fmt.Sprintf("%s %s", p.RequestID, quote(p.Text, 100))
		if e := p.Elicit; e != nil {
			// The server's words, named as its.
			s = fmt.Sprintf("%s MCP server %s asks during %s: %s", p.RequestID, quote(e.Server, 40), e.ActionID, quote(p.Text, 100))
			if len(e.Sensitive) > 0 {
				s += " · asks for what looks like a secret: " + quote(strings.Join(e.Sensitive, ", "), 60)
			}
		}
		if len(p.Options) > 0 {
			s += " options " + strings.Join(p.Options, " | ")
		}
		return s, err
	case facts.KindQuestionAnswered:
		p, err := facts.Decode[facts.QuestionAnswered](f)
		if p.Served != nil {
			return fmt.Sprintf("%s %s by %s · served from %s seq %d: nobody was asked again", p.RequestID, quote(p.Text, 100), orNone(p.By), p.Served.Thread, p.Served.Seq), err
		}
		if e := p.Elicited; e != nil {
			// The input is in the log, not repeated here: it may be a
			// secret the server asked for.
			return fmt.Sprintf("%s %s for the MCP server by %s", p.RequestID, e.Action, orNone(p.By)), err
		}
		return fmt.Sprintf("%s %s by %s", p.RequestID, quote(p.Text, 100), orNone(p.By)), err
	case facts.KindActionStarted:
		p, err := facts.Decode[facts.ActionStarted](f)
		return fmt.Sprintf("%s started · observed before %s", p.ActionID, shortDigest(p.ObservedBefore)), err
	case facts.KindActionCompleted:
		p, err := facts.Decode[facts.ActionCompleted](f)
		s := fmt.Sprintf("%s report %s · %s · effect %s", p.ActionID, describeReport(p.Report), describeObservation(p.Observation), describeState(p))
		if p.Served != nil {
			s = fmt.Sprintf("%s served from %s seq %d (nothing ran): report %s · %s · effect %s", p.ActionID, p.Served.Thread, p.Served.Seq,
				describeReport(p.Report), describeObservation(p.Observation), describeState(p))
		}
		return s, err
	case facts.KindActionInterrupted:
		p, err := facts.Decode[facts.ActionInterrupted](f)
		s := fmt.Sprintf("%s in doubt: started, never completed (the process died) · ", p.ActionID)
		if p.Cancelled {
			s = fmt.Sprintf("%s interrupted: the run was cancelled while it ran, and it was stopped · ", p.ActionID)
		}
		switch {
		case p.ObservedNow == "":
			s += "nothing could be observed"
		case p.ObservedNow == p.ObservedBefore:
			s += "observed nothing changed since it started"
		case len(p.Changed) > 0:
			s += "observed " + describeChanges(p.Changed) + " since it started" + describeOthers(p.Others, p.Unrecorded)
		case len(p.Own) > 0:
			s += "observed no change of the action's since it started"
		default:
			s += "observed the workspace changed since it started"
		}
		if len(p.Own) > 0 && p.ObservedNow != "" && p.ObservedNow != p.ObservedBefore {
			s += describeOwn(p.Own)
		}
		return s + describeRemoved(p.Removed), err
	case facts.KindCheckRecorded:
		p, err := facts.Decode[facts.CheckRecorded](f)
		s := fmt.Sprintf("%s %s: %s", p.ActionID, describeCheck(p.Check), p.Verdict)
		if p.Reason != "" {
			s += " (" + shorten(p.Reason, 100) + ")"
		}
		return s, err
	case facts.KindEffectReconciled:
		p, err := facts.Decode[facts.EffectReconciled](f)
		s := fmt.Sprintf("%s %s by %s", p.ActionID, p.Decision, orNone(p.By))
		if p.Note != "" {
			s += ": " + quote(p.Note, 80)
		}
		return s, err
	case facts.KindContextCompacted:
		p, err := facts.Decode[facts.ContextCompacted](f)
		return fmt.Sprintf("the conversation up to seq %d is summarized for the model (%d bytes)", p.UpTo, len(p.Summary)), err
	case facts.KindBudgetSet, facts.KindBudgetRaised, facts.KindBudgetShared:
		return describeBudget(f)
	case facts.KindBudgetExhausted:
		p, err := facts.Decode[facts.BudgetExhausted](f)
		return fmt.Sprintf("%s budget exhausted: %d used of %d", p.Resource, p.Used, p.Limit), err
	case facts.KindTransitionFailed:
		p, err := facts.Decode[facts.TransitionFailed](f)
		if p.Defect {
			return fmt.Sprintf("%s died (a defect): %s", p.Key, shorten(p.Message, 120)), err
		}
		return fmt.Sprintf("%s failed (%s, attempt %d): %s", p.Key, p.Class, p.Attempt, shorten(p.Message, 120)), err
	case facts.KindModelCallFailed:
		p, err := facts.Decode[facts.ModelAttempt](f)
		s := fmt.Sprintf("turn %d, call %d: %s", p.Turn, p.Attempt, p.Class)
		if p.Status != 0 {
			s += fmt.Sprintf(" (HTTP %d)", p.Status)
		}
		s += ": " + shorten(p.Message, 120)
		if p.WaitMS > 0 {
			s += fmt.Sprintf(" · waited %v before the next call", time.Duration(p.WaitMS)*time.Millisecond)
		}
		return s, err
	case facts.KindThreadForked:
		p, err := facts.Decode[facts.ThreadForked](f)
		s := fmt.Sprintf("continues thread %s as it was up to seq %d", p.From, p.At)
		if r := p.Rerun; r != nil {
			s = fmt.Sprintf("reruns thread %s from seq %d on %s (key %s", p.From, p.At, shorten(r.Model, 80), shortDigest(r.Key))
			if len(r.Overrides) > 0 {
				s += "; " + shorten(strings.Join(r.Overrides, ", "), 80)
			}
			if r.Live {
				s += "; live"
			}
			s += ")"
		}
		return s, err
	case facts.KindWorkspaceChanged:
		p, err := facts.Decode[facts.WorkspaceChanged](f)
		what := "the workspace changed (" + shortDigest(p.Before) + " → " + shortDigest(p.After) + ")"
		if len(p.Changed) > 0 {
			what = describeChanges(p.Changed) + " changed"
		}
		return fmt.Sprintf("%s since seq %d, before %s, by %s: not the action's", what, p.Since, p.ActionID, orNone(p.By)), err
	case facts.KindPlanModeSet:
		p, err := facts.Decode[facts.PlanModeSet](f)
		s := "plan mode off"
		if p.On {
			s = "plan mode on: no tool that writes, commands read-only"
		}
		if p.Acts > 0 {
			s += fmt.Sprintf(", to act on the plan of turn %d", p.Acts)
		}
		if p.By != "" {
			s += " by " + quote(p.By, 40)
		}
		return s, err
	case facts.KindPlanRecorded:
		p, err := facts.Decode[facts.PlanRecorded](f)
		return fmt.Sprintf("turn %d's answer is the plan: %s · waits for a person to act on it", p.Turn, quote(p.Text, 80)), err
	case facts.KindInstructionsRead:
		p, err := facts.Decode[facts.InstructionsRead](f)
		return DescribeInstructions(p), err
	case facts.KindWorkspaceRestored:
		p, err := facts.Decode[facts.WorkspaceRestored](f)
		were := "they were"
		if len(p.Restored) == 1 {
			were = "it was"
		}
		return fmt.Sprintf("undo by %s restored %s to how %s at seq %d", orNone(p.By), describeChanges(p.Restored), were, p.To), err
	case facts.KindHookRan:
		p, err := facts.Decode[facts.HookRan](f)
		return DescribeHook(p), err
	case facts.KindOutputChecked:
		p, err := facts.Decode[facts.OutputChecked](f)
		if p.Valid {
			return fmt.Sprintf("turn %d: the answer is valid against the output schema", p.Turn), err
		}
		s := fmt.Sprintf("turn %d: the answer is not valid against the output schema (%d in a row)", p.Turn, p.InARow)
		if len(p.Errors) > 0 {
			s += ": " + quote(p.Errors[0], 120)
		}
		return s, err
	case facts.KindChildSpawned, facts.KindThreadSpawned, facts.KindThreadEnded, facts.KindChildReported, facts.KindThreadStopped, facts.KindStopRequested:
		return describeTree(f)
	case facts.KindRerunTurn:
		p, err := facts.Decode[facts.RerunTurn](f)
		if d := p.Diverged; d != nil {
			s := fmt.Sprintf("turn %d diverges from %s's (%s): %s", p.Turn, p.From, d.Why, shorten(d.Detail, 160))
			if p.Stop {
				s += " · the rerun stops"
			}
			return s, err
		}
		s := fmt.Sprintf("turn %d matches %s's (seq %d)", p.Turn, p.From, p.OriginalSeq)
		if len(p.Served) > 0 {
			s += fmt.Sprintf(": its results served (%d)", len(p.Served))
		}
		if len(p.Offers) > 0 {
			s += fmt.Sprintf(" · then offered what followed it there (%d)", len(p.Offers))
		}
		return s, err
	}
	if len(f.Data) == 0 {
		return "", nil
	}
	b, err := f.MarshalJSON()
	return shorten(string(b), 120), err
}

// DescribeHook says a hook's run in a line: "before_tool no-rm (project)
// for 1-c1 run_command: deny, exit 2 after 4ms — rm -rf is not allowed".
func DescribeHook(p facts.HookRan) string {
	s := fmt.Sprintf("%s %s (%s)", p.Event, p.Name, p.Scope)
	switch {
	case p.Tool != "":
		s += " for " + p.Call + " " + p.Tool
	case p.Call != "" && p.Call != "thread":
		s += " for " + p.Call
	}
	s += fmt.Sprintf(": %s, exit %d after %v", hookDecision(p), p.Exit, time.Duration(p.DurationMS)*time.Millisecond)
	if p.Reason != "" {
		s += " — " + shorten(p.Reason, 160)
	}
	if p.Refused != "" {
		s += " · refused: " + shorten(p.Refused, 120)
	}
	if p.Context != "" {
		s += " · adds context " + quote(p.Context, 60)
	}
	if p.Args != "" {
		s += " · rewrote the arguments to " + quote(p.Args, 120)
	}
	for _, l := range NetworkLines(p.Network) {
		s += " · " + l
	}
	return s
}

// hookDecision says what a hook's run decided. A run recorded as allow
// decided nothing (facts.HookAllow: no objection): before a tool the
// call goes on to the policy, or a person, as it would without the hook;
// after one the model is told nothing of it; at any other event nothing
// waited on it.
func hookDecision(p facts.HookRan) string {
	switch {
	case p.Decision != facts.HookAllow:
		return p.Decision
	case p.Event == facts.HookBeforeTool, p.Event == facts.HookAfterTool:
		return "no objection"
	}
	return "ran"
}

// DescribePolicy says an approval policy in a line: "approve writes;
// allow run_command:go test *; deny write_file:.github/* (set by ana)".
func DescribePolicy(p facts.PolicySet) string {
	mode := p.Approve
	if mode == "" {
		mode = "ask"
	}
	parts := []string{"approve " + mode}
	if len(p.Allow) > 0 {
		parts = append(parts, "allow "+strings.Join(p.Allow, ", "))
	}
	if len(p.Deny) > 0 {
		parts = append(parts, "deny "+strings.Join(p.Deny, ", "))
	}
	s := strings.Join(parts, "; ")
	if p.By != "" {
		s += " (set by " + p.By + ")"
	}
	if len(p.Sources) > 0 {
		from := make([]string, len(p.Sources))
		for i, r := range p.Sources {
			from[i] = r.Rule + " from " + sourceName(r.Scope, r.Path, r.Digest)
		}
		s += "; " + strings.Join(from, ", ")
	}
	for _, ig := range p.Ignored {
		s += "; ignored, not trusted: " + sourceName(ig.Scope, ig.Path, ig.Digest) + " " + strings.Join(ig.Ignored, ", ")
	}
	return EscapeLine(s)
}

// SettingsSources says where a thread's configuration came from, in a
// line: "settings user ~/.config/harness/config.json@1a2b3c4d5e6f (model),
// flag (approve); ignored, not trusted: project
// /w/.harness/project.json@… (allow, mcpServers)".
func SettingsSources(srcs []facts.SettingsSource) string {
	var set, ignored []string
	for _, src := range srcs {
		name := sourceName(src.Scope, src.Path, src.Digest)
		if len(src.Keys) > 0 {
			set = append(set, name+" ("+strings.Join(src.Keys, ", ")+")")
		}
		if len(src.Ignored) > 0 {
			ignored = append(ignored, name+" ("+strings.Join(src.Ignored, ", ")+")")
		}
	}
	s := "settings " + orNone(strings.Join(set, ", "))
	if len(ignored) > 0 {
		s += "; ignored, not trusted: " + strings.Join(ignored, ", ")
	}
	return EscapeLine(s)
}

// sourceName names a scope of settings: "flag", or "project
// /w/.harness/project.json@1a2b3c4d5e6f".
func sourceName(scope, path, digest string) string {
	s := scope
	if path != "" {
		s += " " + path
	}
	if digest != "" {
		s += "@" + shortDigest(digest)
	}
	return s
}

// Sandbox says in a few words where a command may reach: "in the sandbox
// (workspace-write, no network)", or "unsandboxed (sandbox off)".
func Sandbox(s facts.Sandbox) string {
	if s.Mode == facts.SandboxOff {
		return "unsandboxed (sandbox off)"
	}
	net := "no network"
	switch {
	case s.Network:
		net = "network"
	case len(s.NetworkAllow) > 0:
		net = "network only to " + strings.Join(s.NetworkAllow, ", ")
	}
	out := fmt.Sprintf("in the sandbox (%s, %s)", s.Mode, net)
	if strings.HasPrefix(s.Mechanism, "unavailable") {
		out += ", which is not available here"
	}
	return EscapeLine(out)
}

// describeBounds says when a thread compacts its conversation ("" when
// never).
func describeBounds(c facts.ContextBounds) string {
	var parts []string
	if c.Window > 0 {
		parts = append(parts, fmt.Sprintf("past %.0f%% of a %d-token window", c.Fraction*100, c.Window))
	}
	if c.CompactAt > 0 {
		parts = append(parts, fmt.Sprintf("past about %d tokens", c.CompactAt))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; compacts " + strings.Join(parts, " or ")
}

// SandboxDetail says where a command may reach, for the person who must
// approve it: the mode, the network, and the roots it may write.
func SandboxDetail(s facts.Sandbox) string {
	if s.Mode == facts.SandboxOff {
		return "sandbox off: the command runs with your full authority (your files, your network); only its environment is cut down"
	}
	net := "no network"
	switch {
	case s.Network:
		net = "network allowed"
	case len(s.NetworkAllow) > 0:
		net = "no network but the harness's proxy, to " + strings.Join(s.NetworkAllow, ", ")
	}
	d := fmt.Sprintf("sandbox %s, %s; writes only %s", s.Mode, net, strings.Join(append(slices.Clone(s.Writable), "its own $TMPDIR"), ", "))
	if len(s.ReadOnly) > 0 {
		d += "; read-only: " + strings.Join(s.ReadOnly, ", ")
	}
	if s.GitRefused != "" {
		d += "; .git: " + s.GitRefused + " (git cannot write its metadata there)"
	}
	if strings.HasPrefix(s.Mechanism, "unavailable") {
		d += "; " + s.Mechanism
	}
	return EscapeLine(d)
}

func describeTurn(p facts.ModelTurn) string {
	var parts []string
	if p.Text != "" {
		parts = append(parts, quote(p.Text, 80))
	}
	for _, c := range p.ToolCalls {
		parts = append(parts, fmt.Sprintf("calls %s %s", c.Name, shorten(c.Args, 80)))
	}
	if p.Question != nil {
		parts = append(parts, "asks "+quote(p.Question.Text, 80))
	}
	if c := p.Cut; c != nil {
		cut := fmt.Sprintf("cut off at a limit (stop reason %s", quote(p.StopReason, 40))
		if c.InARow > 1 {
			cut += fmt.Sprintf(", %d turns in a row", c.InARow)
		}
		cut += ")"
		if len(c.Calls) > 0 {
			cut += fmt.Sprintf(" while calling %s, which did not run", shorten(strings.Join(c.Calls, ", "), 80))
		}
		parts = append(parts, cut+", not a whole answer")
	}
	s := fmt.Sprintf("turn %d: %s", p.Turn, strings.Join(parts, " · "))
	if p.Usage != (facts.Usage{}) {
		s += fmt.Sprintf(" · %d in / %d out tokens", p.Usage.InputTokens, p.Usage.OutputTokens)
	}
	if p.ToolsUnseen {
		s += " · the server counted fewer input tokens than the tool schemas take: it left the tools out of the prompt (a chat template without tool support?)"
	}
	if n := len(p.Attempts); n > 0 {
		calls := "calls"
		if n == 1 {
			calls = "call"
		}
		s += fmt.Sprintf(" · after %d failed %s: %s", n, calls, describeAttempts(p.Attempts))
	}
	return s
}

// describeAttempts says what each failed call of a model turn met.
func describeAttempts(as []facts.ModelAttempt) string {
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = string(a.Class)
		if a.Status != 0 {
			parts[i] += " " + strconv.Itoa(a.Status)
		}
	}
	return strings.Join(parts, ", ")
}

func describeReport(r facts.Report) string {
	s := string(r.Status)
	if r.ExitCode != 0 {
		s += " (exit " + strconv.Itoa(r.ExitCode) + ")"
	}
	if r.Error != "" {
		s += " (" + shorten(r.Error, 80) + ")"
	}
	return s
}

// DescribeObservation says what the runtime's own observer saw: nothing
// (no observation was possible), no change, or the changed paths.
func DescribeObservation(o facts.Observation) string {
	return EscapeLine(describeObservation(o))
}

func describeObservation(o facts.Observation) string {
	s := describeObserved(o)
	if len(o.Removed) > 0 && s == "observed no change" {
		s = "observed no other change"
	}
	return s + describeRemoved(o.Removed)
}

// describeRemoved is " · " and what the runtime removed after an
// action, before it observed (facts.Removal), or "".
func describeRemoved(rs []facts.Removal) string {
	if len(rs) == 0 {
		return ""
	}
	var parts, stuck []string
	for _, r := range rs {
		what := r.Path + " (" + r.Kind
		if r.Names != "" {
			what += " naming " + quote(r.Names, 100)
		}
		what += ")"
		if r.Error != "" {
			stuck = append(stuck, what+": "+shorten(r.Error, 100))
			continue
		}
		parts = append(parts, what)
	}
	var s string
	if len(parts) > 0 {
		s += " · made by it and removed by harness before it looked (git would read another config through it): " + strings.Join(parts, ", ")
	}
	if len(stuck) > 0 {
		s += " · made by it, and harness could NOT remove it (git would read another config through it; remove it by hand): " + strings.Join(stuck, ", ")
	}
	return s
}

func describeObserved(o facts.Observation) string {
	switch {
	case !o.Available && o.Error != "":
		return "observation unavailable (" + shorten(o.Error, 60) + ")"
	case !o.Available:
		return "not observed (nobody looked)"
	case len(o.Changed) == 0 && o.Before == o.After:
		return "observed no change"
	case len(o.Changed) == 0:
		return "observed a change"
	}
	return "observed " + describeChanges(o.Changed) + describeOthers(o.Others, o.Unrecorded)
}

// describeOthers says which of an observation's paths other threads'
// actions made, and which nobody recorded: " · by t2 2-w: b.txt".
func describeOthers(others []facts.OtherChange, unrecorded []string) string {
	var s string
	for _, by := range others {
		s += fmt.Sprintf(" · by %s %s: %s", by.Thread, by.Action, strings.Join(by.Paths, ", "))
		if by.Running {
			s += " (running)"
		}
	}
	if len(unrecorded) > 0 {
		s += " · by nobody recorded: " + strings.Join(unrecorded, ", ")
	}
	return s
}

// describeOwn says which paths an action in doubt left out as the files
// of the process that began it: " · left out: run.log, the output of the
// process that began it, not the action's".
func describeOwn(own []string) string {
	shown := own
	more := ""
	if len(shown) > 5 {
		shown, more = shown[:5], fmt.Sprintf(" and %d more", len(own)-5)
	}
	return " · left out: " + strings.Join(shown, ", ") + more + ", the output of the process that began it, not the action's"
}

// DescribeChanges says a changed-path inventory in a line: each path with
// what happened to it ("notes.txt (added), a.go (modified)"), the first
// five and how many more; "no paths" for none.
func DescribeChanges(cs []facts.PathChange) string { return EscapeLine(describeChanges(cs)) }

func describeChanges(cs []facts.PathChange) string {
	if len(cs) == 0 {
		return "no paths"
	}
	parts := make([]string, 0, len(cs))
	for i, c := range cs {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(cs)-i))
			break
		}
		parts = append(parts, c.Path+" ("+describeChange(c)+")")
	}
	return strings.Join(parts, ", ")
}

// describeChange is ChangeKind with the modes, where both are recorded and
// differ: "mode 0644 → 0755", "modified, mode 0755 → 0644".
func describeChange(c facts.PathChange) string {
	kind := ChangeKind(c)
	if !c.ModeChanged() {
		return kind
	}
	modes := fmt.Sprintf("%04o → %04o", c.BeforeMode, c.AfterMode)
	if kind == "mode" {
		return "mode " + modes
	}
	return kind + ", mode " + modes
}

// ChangeKind names a path change: added, removed, modified, or mode (the
// mode changed, the content did not).
func ChangeKind(c facts.PathChange) string {
	switch {
	case c.Before == "":
		return "added"
	case c.After == "":
		return "removed"
	case c.Before == c.After:
		return "mode"
	}
	return "modified"
}

// describeState is the effect state, flagged when it needs a person.
func describeState(p facts.ActionCompleted) string {
	switch p.EffectState {
	case facts.EffectUnknown:
		if p.Report.InDoubt {
			return "unknown — in doubt: whether it happened is unknown; open until a person reconciles it"
		}
		return "unknown — success reported, nothing observed changed: open until a person reconciles it"
	case facts.EffectReported:
		return "reported — nobody observed it; only the report says so"
	}
	return string(p.EffectState)
}

func describeCheck(c facts.CheckSpec) string {
	if c.Target == "" {
		return c.Name
	}
	return c.Name + " " + c.Target
}

// short is a digest's first 12 hex digits.
func shortDigest(digest string) string {
	if digest == "" {
		return "(none)"
	}
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// Clip is s cut to its first n runes when it is longer, with the cut
// marked and the whole length said ("…" and "(9437184 bytes in all)"), so
// that a model's megabytes of arguments never flood the line a person
// reads to decide. Escape the result as any model text.
func Clip(s string, n int) string {
	if n < 1 || len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := 0
	for i := range s {
		if n == 0 {
			cut = i
			break
		}
		n--
	}
	return s[:cut] + "… (" + strconv.Itoa(len(s)) + " bytes in all)"
}

// quote quotes s, shortened to about n runes.
func quote(s string, n int) string { return strconv.Quote(shorten(s, n)) }

// shorten cuts s to at most n runes, on one line.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// CommandLines shows a shell command verbatim, over as many lines as it
// has, each escaped (see EscapeLine): what the shell will read, not a JSON
// string of it. A command with no text is one empty line.
func CommandLines(command string) []string {
	lines := strings.Split(strings.TrimSuffix(command, "\n"), "\n")
	for i, l := range lines {
		lines[i] = EscapeLine(l)
	}
	return lines
}

// DescribeInstructions says which instruction files a turn was given, with
// their sizes and digests, and which were left out and why.
func DescribeInstructions(p facts.InstructionsRead) string {
	if len(p.Files) == 0 {
		return fmt.Sprintf("turn %d: no instruction files (those read before are gone)", p.Turn)
	}
	parts := make([]string, len(p.Files))
	for i, f := range p.Files {
		if f.Skipped != "" {
			parts[i] = fmt.Sprintf("%s %s left out: %s", f.Scope, quote(f.Path, 80), shorten(f.Skipped, 120))
			continue
		}
		parts[i] = fmt.Sprintf("%s %s (%s, %s)", f.Scope, quote(f.Path, 80), Plural(f.Size, "byte", "bytes"), shortDigest(f.Digest))
	}
	return fmt.Sprintf("turn %d instructions: %s", p.Turn, strings.Join(parts, "; "))
}

// DescribeWorktreeResult says in a line what a thread left in its own
// worktree: "branch harness/t1 (base 1a2b…, head 3c4d…) changes a.txt;
// the worktree removed" (or kept, at its path, or why it could not be
// finished).
func DescribeWorktreeResult(p facts.WorktreeResult) string {
	s := fmt.Sprintf("branch %s (base %.12s, head %.12s)", EscapeLine(p.Branch), p.Base, p.Head)
	if len(p.Changed) == 0 {
		s += " changes nothing"
	} else {
		s += " changes " + EscapeLine(strings.Join(p.Changed, ", "))
	}
	if p.Kept != "" {
		s += "; the worktree is kept at " + EscapeLine(p.Kept)
	} else if p.Error == "" {
		s += "; the worktree removed"
	}
	if p.Error != "" {
		s += "; " + quote(p.Error, 200)
	}
	if p.Offered {
		s += "; offers its merge into the workspace (a person decides)"
	}
	return s
}

// hasHook reports whether hooks has one for the event.
func hasHook(hooks []facts.Hook, event string) bool {
	return slices.ContainsFunc(hooks, func(h facts.Hook) bool { return h.Event == event })
}
