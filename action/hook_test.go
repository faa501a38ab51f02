package action_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

func TestDecideHook(t *testing.T) {
	for _, tc := range []struct {
		name     string
		event    string
		scope    string
		x        action.HookExit
		decision string
		reason   string
		context  string
		refused  string
	}{
		{name: "no output allows", x: action.HookExit{}, decision: facts.HookAllow},
		{name: "exit 2 denies with stderr", x: action.HookExit{Code: 2, Stderr: "no rm -rf\n"}, decision: facts.HookDeny, reason: "no rm -rf"},
		{name: "exit 1 fails", x: action.HookExit{Code: 1, Stderr: "boom"}, decision: facts.HookFailed, reason: "exited with code 1: boom"},
		{name: "timeout fails", x: action.HookExit{Code: -1, Failure: "timed out after 1s"}, decision: facts.HookFailed, reason: "timed out after 1s"},
		{name: "not JSON fails", x: action.HookExit{Stdout: "ok"}, decision: facts.HookFailed, reason: "not one JSON object"},
		{name: "two objects fail", x: action.HookExit{Stdout: `{} {}`}, decision: facts.HookFailed, reason: "not one JSON object"},
		{name: "an array fails", x: action.HookExit{Stdout: `[]`}, decision: facts.HookFailed, reason: "not one JSON object"},
		{name: "unknown decision fails", x: action.HookExit{Stdout: `{"decision": "maybe"}`}, decision: facts.HookFailed, reason: `"maybe"`},
		{name: "deny with reason", x: action.HookExit{Stdout: `{"decision": "deny", "reason": "no"}`}, decision: facts.HookDeny, reason: "no"},
		{name: "block is deny", x: action.HookExit{Stdout: `{"decision": "block", "reason": "no"}`}, decision: facts.HookDeny, reason: "no"},
		{name: "claude code's shape", x: action.HookExit{Stdout: `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "look", "additionalContext": "ctx"}}`},
			decision: facts.HookAsk, reason: "look", context: "ctx"},
		{name: "user approves", scope: "user", x: action.HookExit{Stdout: `{"decision": "approve"}`}, decision: facts.HookApprove},
		{name: "user allow approves", scope: "user", x: action.HookExit{Stdout: `{"hookSpecificOutput": {"permissionDecision": "allow"}}`}, decision: facts.HookApprove},
		{name: "project approve refused", scope: "project", x: action.HookExit{Stdout: `{"decision": "approve"}`}, decision: facts.HookAllow, refused: "never approve"},
		{name: "local approve refused", scope: "local", x: action.HookExit{Stdout: `{"decision": "approve"}`}, decision: facts.HookAllow, refused: "never approve"},
		{name: "after a tool no ask", event: facts.HookAfterTool, scope: "user", x: action.HookExit{Stdout: `{"decision": "ask"}`}, decision: facts.HookAllow, refused: "only a before_tool hook"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			event, scope := tc.event, tc.scope
			if event == "" {
				event = facts.HookBeforeTool
			}
			if scope == "" {
				scope = "project"
			}
			r := action.DecideHook(event, scope, tc.x)
			require.Equal(t, tc.decision, r.Decision)
			require.Contains(t, r.Reason, tc.reason)
			require.Equal(t, tc.context, r.Context)
			require.Contains(t, r.Refused, tc.refused)
			if tc.refused == "" {
				require.Empty(t, r.Refused)
			}
			// The record is one a thread may hold.
			r.Event, r.Name, r.Scope, r.Input = event, "h", scope, "x"
			require.NoError(t, r.Validate())
		})
	}
}

func TestDecideHookBoundsWhatItKeeps(t *testing.T) {
	big := strings.Repeat("é", 10_000)
	r := action.DecideHook(facts.HookBeforeTool, "project", action.HookExit{Code: 2, Stdout: big, Stderr: big})
	require.LessOrEqual(t, len(r.Stdout), facts.MaxHookOutput)
	require.LessOrEqual(t, len(r.Stderr), facts.MaxHookOutput)
	require.LessOrEqual(t, len(r.Reason), 1024)
	require.True(t, strings.HasSuffix(r.Stdout, "…"))
	r.Event, r.Name, r.Scope, r.Input = facts.HookBeforeTool, "h", "project", "x"
	require.NoError(t, r.Validate())
}
