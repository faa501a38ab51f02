package action_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

// A before_tool hook's updatedInput (Claude Code's shape, or at the top)
// becomes the run's Args, compacted; anything but one JSON object with
// no repeated key fails the hook, which denies the call.
func TestDecideHookRewrite(t *testing.T) {
	for _, tc := range []struct {
		name, event, out string
		decision, args   string
		reason, refused  string
	}{
		{name: "claude code's shape", out: `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"path": "b.txt", "content": "x"}}}`,
			decision: facts.HookAllow, args: `{"path":"b.txt","content":"x"}`},
		{name: "at the top, with ask", out: `{"decision": "ask", "reason": "look", "updatedInput": {"path": "c"}}`,
			decision: facts.HookAsk, args: `{"path":"c"}`, reason: "look"},
		{name: "deny wins", out: `{"decision": "deny", "reason": "no", "updatedInput": {"path": "c"}}`, decision: facts.HookDeny, reason: "no"},
		{name: "null is none", out: `{"updatedInput": null}`, decision: facts.HookAllow},
		{name: "a string fails", out: `{"updatedInput": "rm -rf /"}`, decision: facts.HookFailed, reason: "want a JSON object"},
		{name: "an array fails", out: `{"updatedInput": [1]}`, decision: facts.HookFailed, reason: "want a JSON object"},
		{name: "a repeated key fails", out: `{"updatedInput": {"path": "a", "path": "b"}}`, decision: facts.HookFailed, reason: "updatedInput is refused"},
		{name: "not before a tool", event: facts.HookAfterTool, out: `{"updatedInput": {"path": "c"}}`, decision: facts.HookAllow, refused: "only a before_tool hook may rewrite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			event := tc.event
			if event == "" {
				event = facts.HookBeforeTool
			}
			r := action.DecideHook(event, "user", action.HookExit{Stdout: tc.out})
			require.Equal(t, tc.decision, r.Decision, r.Reason)
			require.Equal(t, tc.args, r.Args)
			require.Contains(t, r.Reason, tc.reason)
			require.Contains(t, r.Refused, tc.refused)
			r.Event, r.Name, r.Scope, r.Input = event, "h", "user", "x"
			if r.Args != "" {
				require.Error(t, r.Validate(), "args without the digest of what the hook was given")
				r.ArgsDigest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			}
			require.NoError(t, r.Validate())
		})
	}
}

// The record refuses args where they cannot be: after a tool, with a
// denial, or not an object.
func TestHookRanArgsValidate(t *testing.T) {
	d := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	ok := facts.HookRan{Event: facts.HookBeforeTool, Name: "h", Scope: "user", Input: "x", Decision: facts.HookAllow, Args: `{"a":1}`, ArgsDigest: d}
	require.NoError(t, ok.Validate())
	for _, bad := range []func(*facts.HookRan){
		func(p *facts.HookRan) { p.Event = facts.HookAfterTool },
		func(p *facts.HookRan) { p.Decision = facts.HookDeny },
		func(p *facts.HookRan) { p.Args = `[1]` },
		func(p *facts.HookRan) { p.Args = `{"a":1,"a":2}` },
	} {
		p := ok
		bad(&p)
		require.Error(t, p.Validate())
	}
}
