package present_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
)

// Describe never puts a control character on a person's terminal, whatever
// the fact holds: a path, a tool's arguments, an error message.
func TestDescribeEscapesControlCharacters(t *testing.T) {
	for _, c := range []struct {
		kind    facts.Kind
		payload any
		want    string
	}{
		{facts.KindConfirmationRequested, facts.ConfirmationRequested{RequestID: "1-w", Tool: "write_file", Args: "{\"path\":\"a\x1b[2K\"}", Digest: "d"}, `a\x1b[2K`},
		{facts.KindActionCompleted, facts.ActionCompleted{ActionID: "1-c", Report: facts.Report{Status: facts.StatusFailed, Error: "boom\x1b[1A"},
			Observation: facts.Observation{Available: true, Before: "b", After: "a", Changed: []facts.PathChange{{Path: "x\r\x1b[2Ky", Before: "1", After: "2"}}}, EffectState: facts.EffectObserved}, `x\r\x1b[2Ky (modified)`},
		{facts.KindTransitionFailed, facts.TransitionFailed{Key: "infer/turn/1", Class: facts.ClassPermission, Attempt: 1, Message: "denied\x1b]0;title\x07"}, `denied\x1b]0;title\x07`},
		{facts.KindModelTurn, facts.ModelTurn{Turn: 2, Text: "half\x1b[2J", StopReason: "length\r", Cut: &facts.Cut{Calls: []string{"write\x1b[1Afile"}, InARow: 2}},
			`while calling write\x1b[1Afile, which did not run`},
		{facts.KindModelCallFailed, facts.ModelAttempt{Turn: 1, Attempt: 2, Class: facts.ClassTransient, Status: 503, Message: "busy\x1b[31m", WaitMS: 500},
			`turn 1, call 2: transient (HTTP 503): busy\x1b[31m · waited 500ms`},
	} {
		d, err := facts.NewDraft(c.kind, "", c.payload)
		require.NoError(t, err)
		got := present.Describe(facts.Fact{Kind: d.Kind, Data: d.Data})
		require.Contains(t, got, c.want)
		require.False(t, strings.ContainsAny(got, "\x1b\r\n\x07"), "%q", got)
	}
	got := present.DescribeObservation(facts.Observation{Available: true, Before: "b", After: "a", Changed: []facts.PathChange{{Path: "p\x1b", After: "2"}}})
	require.Equal(t, `observed p\x1b (added)`, got)
}

// A denial says what followed it; a policy says its rules.
func TestDescribeDenialsAndPolicies(t *testing.T) {
	for _, c := range []struct {
		kind    facts.Kind
		payload any
		want    string
	}{
		{facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: "1-c", By: "ana", Reason: "not there"}, `1-c denied by ana: "not there"`},
		{facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: "1-c", By: "ana", Reason: "not there", Then: facts.DenyContinue}, `1-c denied by ana: "not there" (the model is told)`},
		{facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: "1-c", By: "ana", Then: facts.DenyStop}, `1-c denied by ana, who stopped the thread`},
		{facts.KindPolicySet, facts.PolicySet{Approve: "writes", Allow: []string{"run_command:go test *"}, Deny: []string{"write_file:.github/*", "run_command:rm *"}, By: "ana"},
			`approve writes; allow run_command:go test *; deny write_file:.github/*, run_command:rm * (set by ana)`},
		{facts.KindPolicySet, facts.PolicySet{Allow: []string{"write_file:a\x1b[2K"}}, `approve ask; allow write_file:a\x1b[2K`},
	} {
		d, err := facts.NewDraft(c.kind, "", c.payload)
		require.NoError(t, err)
		require.Equal(t, c.want, present.Describe(facts.Fact{Kind: d.Kind, Data: d.Data}))
	}
}

func TestReason(t *testing.T) {
	for in, want := range map[string]string{
		"infer/turn/2 failed (business): openai: 400 bad request": "model turn 2 failed: openai: 400 bad request",
		"infer/turn/1 failed (permission): key\x1b[2K":            `model turn 1 failed: key\x1b[2K`,
		"tool/execute/1-c failed and is still enabled: disk full": "action 1-c failed: disk full",
		"turns budget exhausted: 50 used of 50":                   "turns budget exhausted: 50 used of 50",
		"infer2/infer/turn/1 failed (transient): 429 too many":    "infer2/infer/turn/1 failed: 429 too many",
	} {
		require.Equal(t, want, present.Reason(in), in)
	}
}

func TestCommandLines(t *testing.T) {
	require.Equal(t, []string{"go test ./... \\", "  -run TestX", `echo "\x1b[2K"`}, present.CommandLines("go test ./... \\\n  -run TestX\necho \"\x1b[2K\"\n"))
	require.Equal(t, []string{"ls\t-la"}, present.CommandLines("ls\t-la"))
}

// A policy and a configuration say where each rule came from, and what an
// untrusted file was left out for; a hostile path is escaped.
func TestDescribeSources(t *testing.T) {
	p := facts.PolicySet{Approve: "writes", Deny: []string{"run_command:rm *"}, By: "ana",
		Sources: []facts.RuleSource{{Rule: "approve:writes", Scope: "flag"}, {Rule: "deny:run_command:rm *", Scope: "project", Path: "/w/.harness/project.json", Digest: "0123456789abcdef0123"}},
		Ignored: []facts.SettingsSource{{Scope: "local", Path: "/w/.harness/config\x1b[8m.json", Digest: "abcdef", Ignored: []string{"allow"}}}}
	require.Equal(t, `approve writes; deny run_command:rm * (set by ana); approve:writes from flag, deny:run_command:rm * from project /w/.harness/project.json@0123456789ab; ignored, not trusted: local /w/.harness/config\x1b[8m.json@abcdef allow`,
		present.DescribePolicy(p))
	s := present.SettingsSources([]facts.SettingsSource{
		{Scope: "user", Path: "/u/config.json", Digest: "aaaa", Trusted: true, Keys: []string{"model"}},
		{Scope: "project", Path: "/w/p.json", Digest: "bbbb", Keys: []string{"deny"}, Ignored: []string{"approve", "mcpServers"}},
		{Scope: "flag", Keys: []string{"sandbox"}},
	})
	require.Equal(t, "settings user /u/config.json@aaaa (model), project /w/p.json@bbbb (deny), flag (sandbox); ignored, not trusted: project /w/p.json@bbbb (approve, mcpServers)", s)
}

func TestClipSaysTheWholeLength(t *testing.T) {
	require.Equal(t, "abc", present.Clip("abc", 3))
	require.Equal(t, "ab… (5 bytes in all)", present.Clip("abcde", 2))
	require.Equal(t, "é… (6 bytes in all)", present.Clip("ééé", 1), "cut on a rune, never inside one")
	big := strings.Repeat("x", 9<<20)
	require.Equal(t, 400+len("… (9437184 bytes in all)"), len(present.Clip(big, 400)))
}

// A hook that decided nothing is not said to allow anything: before a
// tool it had no objection (the call still goes to the policy, or a
// person), at any other event it ran. The note that before_tool (or
// after_tool) hooks run side by side is said only when there are such
// hooks. An action found in doubt says the files of the process that
// began it apart from its changes.
func TestDescribeHooksAndOwnFiles(t *testing.T) {
	describe := func(kind facts.Kind, payload any) string {
		d, err := facts.NewDraft(kind, "", payload)
		require.NoError(t, err)
		return present.Describe(facts.Fact{Kind: d.Kind, Data: d.Data})
	}
	ran := facts.HookRan{Event: facts.HookParked, Name: "ping", Scope: "user", Input: "i", Decision: facts.HookAllow}
	require.Contains(t, describe(facts.KindHookRan, ran), "parked ping (user): ran, exit 0")
	ran.Event, ran.Call, ran.Tool = facts.HookBeforeTool, "1-w", "write_file"
	require.Contains(t, describe(facts.KindHookRan, ran), "for 1-w write_file: no objection, exit 0")
	ran.Decision = facts.HookApprove
	require.Contains(t, describe(facts.KindHookRan, ran), ": approve, exit 0")

	conf := facts.SystemConfigured{Model: "m", Hooks: []facts.Hook{{Event: facts.HookParked, Name: "ping", Scope: "user", Command: "true"}},
		HooksTogether: true, AfterHooksTogether: true}
	got := describe(facts.KindSystemConfigured, conf)
	require.Contains(t, got, "hooks parked ping (user)")
	require.NotContains(t, got, "side by side")
	conf.Hooks = append(conf.Hooks, facts.Hook{Event: facts.HookBeforeTool, Name: "lint", Scope: "user", Command: "true"})
	got = describe(facts.KindSystemConfigured, conf)
	require.Contains(t, got, "(a turn's before_tool hooks side by side)")
	require.NotContains(t, got, "after_tool hooks side by side")

	in := facts.ActionInterrupted{ActionID: "1-c", ObservedBefore: "b", ObservedNow: "n", Own: []string{"run.log"}}
	require.Contains(t, describe(facts.KindActionInterrupted, in), "observed no change of the action's since it started · left out: run.log, the output of the process that began it")
	in.Changed = []facts.PathChange{{Path: "c.txt", After: "1"}}
	require.Contains(t, describe(facts.KindActionInterrupted, in), "observed c.txt (added) since it started · left out: run.log")
}
