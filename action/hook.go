package action

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
)

// HookExit is how a hook's command ended: its exit code (-1 when it did
// not exit by itself), what it wrote, how long it took, and, when it did
// not exit by itself, why (a timeout, a command that could not start).
type HookExit struct {
	Code           int
	Stdout, Stderr string
	Took           time.Duration
	Failure        string
	// Network is the connections it made through the sandbox's proxy
	// (a network allow-list); nil without one.
	Network *facts.Network
}

// hookOutput is what a hook may answer on stdout: Claude Code's hook
// output, the convention users know. A decision at the top ("deny",
// "block", "ask", "approve") or as hookSpecificOutput.permissionDecision
// ("deny", "ask", "allow" — which approves), with its reason, and context
// for the model; before a tool, updatedInput (at the top or in
// hookSpecificOutput) replaces the call's arguments.
type hookOutput struct {
	Decision          string          `json:"decision"`
	Reason            string          `json:"reason"`
	AdditionalContext string          `json:"additionalContext"`
	UpdatedInput      json.RawMessage `json:"updatedInput"`
	Specific          *struct {
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		AdditionalContext        string          `json:"additionalContext"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
	} `json:"hookSpecificOutput"`
}

// DecideHook reads what a hook's run said, for event, from a hook of
// scope:
//
//   - it did not exit by itself (a timeout, a command that could not
//     start): failed;
//   - exit 2: deny, its stderr the reason;
//   - any other non-zero exit: failed;
//   - exit 0: its stdout, when not empty, must be one JSON object (else
//     failed); its decision, if any, is deny (or block), ask or approve
//     (or allow); none is allow — no objection.
//
// Only a user-scope hook may approve, and only before a tool: another's
// approve is recorded as allow with Refused saying why. After a tool
// there is nothing to ask or approve: an ask or approve is left out the
// same way. The record's stdout and stderr are cut at
// facts.MaxHookOutput bytes.
func DecideHook(event, scope string, x HookExit) facts.HookRan {
	r := facts.HookRan{Exit: x.Code, DurationMS: x.Took.Milliseconds(),
		Stdout: cut(x.Stdout, facts.MaxHookOutput), Stderr: cut(x.Stderr, facts.MaxHookOutput), Network: x.Network}
	stderr := strings.TrimSpace(cut(x.Stderr, 1024))
	switch {
	case x.Failure != "":
		r.Exit, r.Decision, r.Reason = -1, facts.HookFailed, x.Failure
		return r
	case x.Code == 2:
		r.Decision, r.Reason = facts.HookDeny, stderr
		return r
	case x.Code != 0:
		r.Decision, r.Reason = facts.HookFailed, fmt.Sprintf("exited with code %d", x.Code)
		if stderr != "" {
			r.Reason += ": " + stderr
		}
		return r
	}
	r.Decision = facts.HookAllow
	out := bytes.TrimSpace([]byte(x.Stdout))
	if len(out) == 0 {
		return r
	}
	var o hookOutput
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&o); err != nil || dec.More() || out[0] != '{' {
		if err == nil {
			err = fmt.Errorf("want one JSON object")
		}
		r.Decision, r.Reason = facts.HookFailed, fmt.Sprintf("its output is not one JSON object: %v", err)
		return r
	}
	decision, reason, context, input := o.Decision, o.Reason, o.AdditionalContext, o.UpdatedInput
	if s := o.Specific; s != nil {
		if s.PermissionDecision != "" {
			decision, reason = s.PermissionDecision, s.PermissionDecisionReason
		}
		if s.AdditionalContext != "" {
			context = s.AdditionalContext
		}
		if len(s.UpdatedInput) > 0 {
			input = s.UpdatedInput
		}
	}
	r.Reason, r.Context = cut(reason, facts.MaxHookOutput), cut(context, facts.MaxHookOutput)
	switch decision {
	case "":
	case "deny", "block":
		r.Decision = facts.HookDeny
	case "ask":
		r.Decision = facts.HookAsk
	case "approve", "allow":
		r.Decision = facts.HookApprove
	default:
		r.Decision, r.Reason = facts.HookFailed, fmt.Sprintf("its decision %q is none of deny, block, ask, approve, allow", decision)
		return r
	}
	switch {
	case (r.Decision == facts.HookAsk || r.Decision == facts.HookApprove) && event != facts.HookBeforeTool:
		r.Refused = fmt.Sprintf("%s: only a before_tool hook may ask or approve", r.Decision)
		r.Decision = facts.HookAllow
	case r.Decision == facts.HookApprove && scope != "user":
		r.Refused = fmt.Sprintf("approve: a hook from %s settings may deny or ask, never approve; only your own (user) settings may", scope)
		r.Decision = facts.HookAllow
	}
	return rewrite(r, event, input)
}

// rewrite adds to r the arguments a hook's updatedInput gives the call:
// only before a tool, and not with a denial (nothing runs). They must be
// one JSON object with no key named twice (a person would see one value
// and the tool get the other); anything else fails the hook, which
// denies the call. Whether they suit the tool is decided when the call
// is requested with them, as for the model's.
func rewrite(r facts.HookRan, event string, input json.RawMessage) facts.HookRan {
	if len(input) == 0 || string(input) == "null" || r.Decision == facts.HookDeny {
		return r
	}
	if event != facts.HookBeforeTool {
		r.Refused = strings.TrimPrefix(r.Refused+"; updatedInput: only a before_tool hook may rewrite a call's arguments", "; ")
		return r
	}
	var b bytes.Buffer
	err := facts.CheckJSON(input)
	if err == nil && input[0] != '{' {
		err = fmt.Errorf("want a JSON object, the tool's arguments")
	}
	if err == nil {
		err = json.Compact(&b, input)
	}
	if err != nil {
		r.Decision, r.Reason, r.Context = facts.HookFailed, fmt.Sprintf("its updatedInput is refused: %v", err), ""
		return r
	}
	r.Args = b.String()
	return r
}

// cut is s cut to at most n bytes, on a UTF-8 boundary, marked when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	s = s[:n-len(mark)]
	return strings.ToValidUTF8(s, "") + mark
}
