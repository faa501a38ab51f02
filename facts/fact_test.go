package facts_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// samples holds a payload for every registered kind, with every field set
// that a runtime would set.
var samples = []struct {
	kind    facts.Kind
	payload any
}{
	{facts.KindUserMessage, facts.UserMessage{Text: "make the tests pass <please> & thanks"}},
	{facts.KindSystemConfigured, facts.SystemConfigured{
		Prompt: "You are a careful coding agent.", Model: "scripted",
		Tools: []facts.ToolSchema{{Name: "read", Description: "read a file",
			Schema: facts.RawJSON(`{"type": "object", "properties": {"path": {"type": "string"}}}`)}},
		Version: "v1", Workspace: "host:/ws",
		Sandbox: &facts.Sandbox{Mode: facts.SandboxWorkspaceWrite, Writable: []string{"/ws", "/cache/go-build"},
			Temp: "/tmp/harness-cmd-*", ReadOnly: []string{"/ws/.git/hooks", "/ws/.git/config"}, Hidden: []string{"/ws/.harness"},
			HiddenNames: []string{".harness"}, Env: []string{"PATH", "LC_*"}, Mechanism: "linux namespaces and landlock", LandlockABI: 7},
		// (The digest is of the stored form: the same before and after.)
		Output: &facts.OutputSchema{Schema: facts.RawJSON(`{"type": "object", "required": ["ok"]}`), Source: "schema.json",
			Digest: facts.SchemaDigest(facts.RawJSON(`{"type":"object","required":["ok"]}`))},
	}},
	{facts.KindModelTurn, facts.ModelTurn{
		Turn: 3, Text: "Reading the file first.",
		ToolCalls:  []facts.ToolCall{{ID: "call_7", Name: "read", Args: `{"path":"main.go"}`}},
		Question:   &facts.Question{ID: "q1", Text: "Which branch?", Options: []string{"main", "dev"}, AllowFreeText: true},
		Usage:      facts.Usage{InputTokens: 1200, OutputTokens: 85},
		StopReason: "length", Cut: &facts.Cut{Calls: []string{"write"}, InARow: 2},
	}},
	{facts.KindModelCallFailed, facts.ModelAttempt{Turn: 3, Attempt: 1, Class: facts.ClassTransient, Status: 503, Message: "unavailable", Body: `{"error":"busy"}`, WaitMS: 500}},
	{facts.KindConfirmationRequested, facts.ConfirmationRequested{RequestID: "r1", CallID: "call_7", Tool: "write", Args: `{"path":"a.go"}`, Digest: "sha256:ab"}},
	{facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: "r1", By: "ana", Reason: "not that file", Digest: "sha256:ab", Then: facts.DenyStop}},
	{facts.KindQuestionAsked, facts.QuestionAsked{RequestID: "q1", Text: "Which branch?", Options: []string{"main"}, AllowFreeText: true}},
	{facts.KindQuestionAnswered, facts.QuestionAnswered{RequestID: "q1", Text: "main", By: "ana"}},
	{facts.KindActionRequested, facts.ActionRequested{
		ActionID: "a1", CallID: "call_7", Capability: "workspace.write", Instruction: "write a.go",
		Precondition: "sha256:00", IdempotencyKey: "t1/a1", RequestedBy: "scheduler", ActorID: "coder",
		Adapter: "tools.write", Payload: facts.RawJSON(`{"path":"a.go","content":"package a\n<tag>"}`),
		Check:   &facts.CheckSpec{Name: "go-test", Target: "./...", Args: facts.RawJSON(`["-run","X"]`)},
		Confirm: true,
		Sandbox: &facts.Sandbox{Mode: facts.SandboxOff, Network: true, Env: []string{"PATH"}, Mechanism: "none"},
	}},
	{facts.KindActionStarted, facts.ActionStarted{ActionID: "a1", ObservedBefore: "sha256:00"}},
	{facts.KindActionCompleted, facts.ActionCompleted{
		ActionID: "a1",
		Report: facts.Report{Status: facts.StatusSucceeded, ClaimedState: "wrote a.go", Transcript: "ok",
			Stdout: "done\n", Stderr: "warn\n", ExitCode: 2, Error: "exit 2"},
		Observation: facts.Observation{Available: true, Before: "sha256:00", After: "sha256:01",
			Changed: []facts.PathChange{{Path: "a.go", After: "sha256:aa"}}, Error: ""},
		EffectState: facts.EffectObserved,
	}},
	{facts.KindActionInterrupted, facts.ActionInterrupted{ActionID: "a1", ObservedBefore: "sha256:00", ObservedNow: "sha256:01",
		Changed: []facts.PathChange{{Path: "a.go", Before: "sha256:0a", After: "sha256:aa", BeforeMode: 0o644, AfterMode: 0o755}}}},
	{facts.KindCheckRecorded, facts.CheckRecorded{ActionID: "a1", Check: facts.CheckSpec{Name: "go-test", Target: "./..."},
		Verdict: facts.VerdictFail, Reason: "TestX failed"}},
	{facts.KindEffectReconciled, facts.EffectReconciled{ActionID: "a1", Decision: facts.DecisionRetry, By: "ana", Note: "flaky disk"}},
	{facts.KindContextCompacted, facts.ContextCompacted{UpTo: 40, Summary: "the user wants a fix for #12"}},
	{facts.KindBudgetExhausted, facts.BudgetExhausted{Resource: "tokens", Limit: 100000, Used: 100421}},
	{facts.KindTransitionFailed, facts.TransitionFailed{Key: "infer/turn/3", Class: facts.ClassTransient, Message: "429", Attempt: 2}},
	{facts.KindThreadForked, facts.ThreadForked{From: "t0", At: 12}},
	{facts.KindWorkspaceRestored, facts.WorkspaceRestored{To: 3, By: "ana", Restored: []facts.PathChange{{Path: "cache.toml", Before: "sha256:02", After: "sha256:01", BeforeMode: 0o644, AfterMode: 0o644}}}},
	{facts.KindWorkspaceChanged, facts.WorkspaceChanged{ActionID: "1-w", By: facts.ByUnknown, Since: 9, Before: "sha256:01", After: "sha256:02",
		Changed: []facts.PathChange{{Path: "notes.txt", Before: "sha256:0a", After: "sha256:0b", BeforeMode: 0o644, AfterMode: 0o644}}}},
	{facts.KindPolicySet, facts.PolicySet{Approve: "writes", Allow: []string{"run_command:go test *"}, Deny: []string{"write_file:.github/*"}, By: "ana"}},
	{facts.KindContextBoundsSet, facts.ContextBoundsSet{Bounds: facts.ContextBounds{Window: 32000, Fraction: 0.8}, By: "ana"}},
	{facts.KindPlanModeSet, facts.PlanModeSet{By: "ana", Acts: 3}},
	{facts.KindPlanRecorded, facts.PlanRecorded{Turn: 3, Text: "1. Read cache.go. 2. Set the TTL."}},
	{facts.KindInstructionsRead, facts.InstructionsRead{Turn: 2, Files: []facts.InstructionFile{
		{Scope: facts.InstructionsUser, Path: "/home/ana/.config/harness/AGENTS.md", Digest: strings.Repeat("ab", 32), Size: 21},
		{Scope: facts.InstructionsProject, Path: "pkg/AGENTS.md", Size: 70000, Skipped: "70000 bytes, over the limit of 65536 bytes a file"}}}},
	{facts.KindChildSpawned, facts.ChildSpawned{Child: "t1.1-d1", CallID: "1-d1", Task: "Review cache.toml", Tools: []string{"read_file"}, MaxTurns: 5, MaxTokens: 9000}},
	{facts.KindThreadSpawned, facts.ThreadSpawned{Parent: "t1", Seq: 4, Hash: strings.Repeat("ab", 32), Key: "delegate/spawn/1-d1",
		CallID: "1-d1", Task: "Review cache.toml", Tools: []string{"read_file"}, MaxTurns: 5}},
	{facts.KindThreadEnded, facts.ThreadEnded{Status: facts.EndDone, Result: "It sets ttl_seconds = 60.", Turns: 2, Tokens: 300}},
	{facts.KindChildReported, facts.ChildReported{Child: "t1.1-d1", CallID: "1-d1", Seq: 7, Hash: strings.Repeat("cd", 32),
		Status: facts.EndStopped, Reason: "turns budget exhausted", Result: "partial", Turns: 5, Tokens: 900}},
	{facts.KindThreadStopped, facts.ThreadStopped{By: "ana", Reason: "enough"}},
	{facts.KindHookRan, facts.HookRan{Event: facts.HookBeforeTool, Hook: 0, Name: "no-rm", Scope: "project", Digest: "ab12",
		Call: "1-c", Tool: "run_command", Input: strings.Repeat("ef", 32), Exit: 2, Decision: facts.HookDeny, Reason: "rm -rf is not allowed",
		DurationMS: 4, Stderr: "rm -rf is not allowed"}},
	{facts.KindStopRequested, facts.StopRequested{By: "ana", Reason: "enough"}},
	{facts.KindOutputChecked, facts.OutputChecked{Turn: 2, Digest: "sha256:ab", Errors: []string{"at /ok: got string, want boolean"}, InARow: 1}},
	{facts.KindBudgetSet, facts.BudgetSet{Limit: facts.Spend{USD: 2.5, Tokens: 100000}, By: "ana", Source: "flag"}},
	{facts.KindBudgetRaised, facts.BudgetRaised{Add: facts.Spend{USD: 5}, By: "ana"}},
	{facts.KindBudgetShared, facts.BudgetShared{Limit: facts.Spend{USD: 2.5}, Elsewhere: facts.Spend{USD: 0.75, Tokens: 3000}, Root: "t1"}},
	{facts.KindRerunTurn, facts.RerunTurn{Turn: 3, From: "t1", OriginalSeq: 14, Diverged: &facts.Divergence{Why: facts.DivergedTool,
		Original: &facts.ToolCall{ID: "n", Name: "write_file", Args: `{"path":"notes.txt"}`}, Rerun: &facts.ToolCall{ID: "x3", Name: "read_file", Args: `{"path":"cache.toml"}`},
		Detail: "call 1 is read_file where the original called write_file"}, Stop: true}},
	{facts.KindWorktreeFinished, facts.WorktreeResult{Branch: "harness/t1", Base: strings.Repeat("a", 40), Head: strings.Repeat("b", 40), Changed: []string{"a.txt"}, Kept: "/cache/harness/worktrees/x/t1"}},
	{facts.KindModelSampled, facts.ModelSampled{ActionID: "1-a", Server: "t", N: 1, Turn: 1, Messages: 1, Bytes: 14, Digest: strings.Repeat("c", 64),
		System: "You name colours.", AskedMaxTokens: 50000, MaxTokens: 200, IncludeContext: "allServers", Text: "Blue.",
		Usage: facts.Usage{InputTokens: 20, OutputTokens: 2}, Cost: &facts.TurnCost{USD: 0.0001, Table: "harness-2025-11"}, Model: "openai:gpt-5"}},
}

// sampleFacts chains a fact of every sample kind into one thread.
func sampleFacts(t testing.TB) []facts.Fact {
	t.Helper()
	at := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
	var out []facts.Fact
	var prev facts.Hash
	for i, s := range samples {
		d, err := facts.NewDraft(s.kind, "transition/"+string(s.kind), s.payload)
		require.NoError(t, err, s.kind)
		f := facts.Fact{Thread: "t1", Seq: uint64(i + 1), Kind: d.Kind, Cause: d.Cause,
			At: at.Add(time.Duration(i) * time.Second), Data: d.Data, Prev: prev}
		prev = f.Hash()
		out = append(out, f)
	}
	return out
}

func TestEveryKindHasASample(t *testing.T) {
	var have []facts.Kind
	for _, s := range samples {
		have = append(have, s.kind)
	}
	// Kinds registered by other tests ("test.…") are not the runtime's;
	// they stay registered across -count runs.
	var kinds []facts.Kind
	for _, k := range facts.Kinds() {
		if !strings.HasPrefix(string(k), "test.") {
			kinds = append(kinds, k)
		}
	}
	require.ElementsMatch(t, kinds, have)
}

func goldenFact() facts.Fact {
	prev, _ := facts.ParseHash(strings.Repeat("ab", 32))
	return facts.Fact{
		Thread: "t1", Seq: 2, Kind: facts.KindUserMessage, Cause: "ingress/k1",
		At:   time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC),
		Data: []byte{0x81, 0xa4, 't', 'e', 'x', 't', 0xa2, 'h', 'i'}, Prev: prev,
	}
}

// TestHashGolden pins the hashed byte layout. If this test fails, the layout
// changed and every stored chain would stop verifying: add a new version
// instead. The value was computed independently from the layout in Hash's doc
// comment (Python's hashlib over the same bytes).
func TestHashGolden(t *testing.T) {
	require.Equal(t, "bb1c7e272deed3d838e9e400aed1948d711429c8b3b73e89f135c1790c7ca516", goldenFact().Hash().String())
}

func TestHashCoversEveryField(t *testing.T) {
	base := goldenFact()
	for _, tc := range []struct {
		name   string
		change func(*facts.Fact)
	}{
		{"thread", func(f *facts.Fact) { f.Thread = "t2" }},
		{"seq", func(f *facts.Fact) { f.Seq = 3 }},
		{"kind", func(f *facts.Fact) { f.Kind = facts.KindQuestionAnswered }},
		{"cause", func(f *facts.Fact) { f.Cause = "ingress/k2" }},
		{"at by a nanosecond", func(f *facts.Fact) { f.At = f.At.Add(1) }},
		{"data", func(f *facts.Fact) { f.Data = append([]byte(nil), f.Data...); f.Data[8] = 'o' }},
		{"prev", func(f *facts.Fact) { f.Prev[31] ^= 1 }},
		// Length prefixes keep field boundaries apart.
		{"bytes moved from thread to kind", func(f *facts.Fact) { f.Thread = "t"; f.Kind = "1user.message" }},
		{"bytes moved from kind to cause", func(f *facts.Fact) { f.Kind = "user.messagei"; f.Cause = "ngress/k1" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := base
			tc.change(&f)
			require.NotEqual(t, base.Hash(), f.Hash())
		})
	}
}

func TestHashDependsOnTheInstantOnly(t *testing.T) {
	f := goldenFact()
	g := f
	g.At = f.At.In(time.FixedZone("CET", 3600))
	h := f
	h.At = time.Now()
	h.At = f.At.Add(h.At.Sub(h.At)) // carries a monotonic reading
	require.Equal(t, f.Hash(), g.Hash())
	require.Equal(t, f.Hash(), h.Hash())
}

func TestParseHash(t *testing.T) {
	h := goldenFact().Hash()
	p, err := facts.ParseHash(h.String())
	require.NoError(t, err)
	require.Equal(t, h, p)
	upper, err := facts.ParseHash(strings.ToUpper(h.String()))
	require.NoError(t, err)
	require.Equal(t, h, upper)
	require.True(t, facts.Hash{}.IsZero())
	require.False(t, h.IsZero())

	for _, bad := range []string{"", "ab", strings.Repeat("g", 64), strings.Repeat("a", 63), strings.Repeat("a", 66)} {
		_, err := facts.ParseHash(bad)
		require.Error(t, err, bad)
	}
}

func TestKindRules(t *testing.T) {
	for _, tc := range []struct {
		kind facts.Kind
		ok   bool
	}{
		{"user.message", true},
		{"my-app/Deploy_Done.v2", true},
		{"", false},
		{"user message", false},
		{"user\x00message", false},
		{"ünicode", false},
		{facts.Kind(strings.Repeat("k", facts.MaxKindLen)), true},
		{facts.Kind(strings.Repeat("k", facts.MaxKindLen+1)), false},
	} {
		err := tc.kind.Validate()
		if tc.ok {
			require.NoError(t, err, tc.kind)
		} else {
			require.ErrorIs(t, err, facts.ErrInvalid, tc.kind)
		}
	}
}

func TestCauseRules(t *testing.T) {
	for _, tc := range []struct {
		cause string
		ok    bool
	}{
		{"infer/turn/3", true},
		{"ingress/9f1c-ä-✓", true},
		{"", false},
		{"tab\there", false},
		{"nul\x00", false},
		{"bad utf8 \xff", false},
		{"del\x7f", false},
		{"unit separator \x1f", false},
		{"c1 control \u0085", false},
		{" printable ~ ascii {}", true},
		{strings.Repeat("c", facts.MaxCauseLen), true},
		{strings.Repeat("c", facts.MaxCauseLen+1), false},
	} {
		err := facts.ValidateCause(tc.cause)
		if tc.ok {
			require.NoError(t, err, tc.cause)
		} else {
			require.ErrorIs(t, err, facts.ErrInvalid, tc.cause)
		}
	}
}

func TestIngressCause(t *testing.T) {
	c := facts.IngressCause("post-42")
	require.Equal(t, "ingress/post-42", c)
	require.True(t, facts.IsIngress(c))
	require.False(t, facts.IsIngress("tool/execute/call_7"))
	require.False(t, facts.IsIngress("ingress"))
}

func TestNewDraft(t *testing.T) {
	msg := facts.UserMessage{Text: "hi"}
	for _, tc := range []struct {
		name    string
		kind    facts.Kind
		cause   string
		payload any
		err     error
	}{
		{"registered value", facts.KindUserMessage, "ingress/k", msg, nil},
		{"registered pointer", facts.KindUserMessage, "ingress/k", &msg, nil},
		{"nil pointer", facts.KindUserMessage, "ingress/k", (*facts.UserMessage)(nil), facts.ErrPayload},
		{"wrong type", facts.KindUserMessage, "ingress/k", facts.QuestionAnswered{RequestID: "q"}, facts.ErrPayload},
		{"untyped nil for a registered kind", facts.KindUserMessage, "ingress/k", nil, facts.ErrPayload},
		{"payload breaks its rules", facts.KindConfirmationAnswered, "ingress/k", facts.ConfirmationAnswered{Approved: true}, facts.ErrPayload},
		{"what follows an approval", facts.KindConfirmationAnswered, "ingress/k", facts.ConfirmationAnswered{RequestID: "r", Approved: true, Then: facts.DenyStop}, facts.ErrPayload},
		{"an unknown end of a denial", facts.KindConfirmationAnswered, "ingress/k", facts.ConfirmationAnswered{RequestID: "r", Then: "later"}, facts.ErrPayload},
		{"a denial that goes on", facts.KindConfirmationAnswered, "ingress/k", facts.ConfirmationAnswered{RequestID: "r", Then: facts.DenyContinue}, nil},
		{"an unknown approval mode", facts.KindPolicySet, "ingress/k", facts.PolicySet{Approve: "most"}, facts.ErrPayload},
		{"a pattern without a tool", facts.KindPolicySet, "ingress/k", facts.PolicySet{Allow: []string{":docs/*"}}, facts.ErrPayload},
		{"an empty policy asks for everything", facts.KindPolicySet, "ingress/k", facts.PolicySet{}, nil},
		{"a negative context window", facts.KindContextBoundsSet, "ingress/k", facts.ContextBoundsSet{Bounds: facts.ContextBounds{Window: -1}}, facts.ErrPayload},
		{"acting on a plan with plan mode on", facts.KindPlanModeSet, "ingress/k", facts.PlanModeSet{On: true, Acts: 2}, facts.ErrPayload},
		{"an output schema whose digest is not its own", facts.KindSystemConfigured, "system/configure", facts.SystemConfigured{Output: &facts.OutputSchema{Schema: facts.RawJSON(`{}`), Digest: "sha256:00"}}, facts.ErrPayload},
		{"a raise of nothing", facts.KindBudgetRaised, "ingress/k", facts.BudgetRaised{By: "ana"}, facts.ErrPayload},
		{"a negative raise", facts.KindBudgetRaised, "ingress/k", facts.BudgetRaised{Add: facts.Spend{USD: -1, Tokens: 5}}, facts.ErrPayload},
		{"a budget of infinite dollars", facts.KindBudgetSet, "ingress/k", facts.BudgetSet{Limit: facts.Spend{USD: math.Inf(1)}}, facts.ErrPayload},
		{"a valid answer without its output", facts.KindOutputChecked, "output/check/1", facts.OutputChecked{Turn: 1, Valid: true}, facts.ErrPayload},
		{"an invalid answer without its errors", facts.KindOutputChecked, "output/check/1", facts.OutputChecked{Turn: 1}, facts.ErrPayload},
		{"an answer with errors past the bound", facts.KindOutputChecked, "output/check/1", facts.OutputChecked{Turn: 1, Errors: make([]string, facts.MaxOutputErrors+1)}, facts.ErrPayload},
		{"a rerun's stop with no divergence", facts.KindRerunTurn, "infer/turn/1", facts.RerunTurn{Turn: 1, From: "t1", Stop: true}, facts.ErrPayload},
		{"served results on a diverged turn", facts.KindRerunTurn, "infer/turn/1", facts.RerunTurn{Turn: 1, From: "t1",
			Served: []facts.Served{{Thread: "t1", Seq: 5}}, Diverged: &facts.Divergence{Why: facts.DivergedArgs}}, facts.ErrPayload},
		{"a result served from no seq", facts.KindRerunTurn, "infer/turn/1", facts.RerunTurn{Turn: 1, From: "t1", Served: []facts.Served{{Thread: "t1"}}}, facts.ErrPayload},
		{"an offer of a completion", facts.KindRerunTurn, "infer/turn/1", facts.RerunTurn{Turn: 1, From: "t1", Offers: []facts.Offer{{Kind: facts.KindActionCompleted, Seq: 5}}}, facts.ErrPayload},
		{"an offer on a diverged turn", facts.KindRerunTurn, "infer/turn/1", facts.RerunTurn{Turn: 1, From: "t1",
			Offers: []facts.Offer{{Kind: facts.KindUserMessage, Seq: 5}}, Diverged: &facts.Divergence{Why: facts.DivergedArgs}}, facts.ErrPayload},
		{"a message served from no seq", facts.KindUserMessage, "rerun/offer/1/1", facts.UserMessage{Text: "hi", Served: &facts.Served{Thread: "t1"}}, facts.ErrPayload},
		{"a plan of no turn", facts.KindPlanRecorded, "plan/record/0", facts.PlanRecorded{}, facts.ErrPayload},
		{"an instruction file of no scope", facts.KindInstructionsRead, "infer/turn/1", facts.InstructionsRead{Files: []facts.InstructionFile{{Path: "AGENTS.md", Digest: "ab"}}}, facts.ErrPayload},
		{"an instruction file given with no digest", facts.KindInstructionsRead, "infer/turn/1", facts.InstructionsRead{Files: []facts.InstructionFile{{Scope: facts.InstructionsProject, Path: "AGENTS.md"}}}, facts.ErrPayload},
		{"unknown enum value", facts.KindEffectReconciled, "ingress/k", facts.EffectReconciled{ActionID: "a", Decision: "maybe"}, facts.ErrPayload},
		{"invalid raw JSON", facts.KindActionRequested, "k", facts.ActionRequested{ActionID: "a", Payload: facts.RawJSON(`{"a":`)}, facts.ErrPayload},
		{"bad kind", "bad kind", "k", nil, facts.ErrInvalid},
		{"cause with a control character", facts.KindUserMessage, "a\x00b", msg, facts.ErrInvalid},
		{"unregistered kind, JSON value", "app.note", "k", map[string]any{"b": 1, "a": []int{1, 2}}, nil},
		{"unregistered kind, nil", "app.note", "k", nil, nil},
		{"unregistered kind, not JSON", "app.note", "k", func() {}, facts.ErrPayload},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := facts.NewDraft(tc.kind, tc.cause, tc.payload)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.kind, d.Kind)
			require.Equal(t, tc.cause, d.Cause)
			require.NoError(t, d.Validate())
		})
	}
	t.Run("an empty cause is left for the runtime, and Validate refuses it", func(t *testing.T) {
		d, err := facts.NewDraft(facts.KindUserMessage, "", msg)
		require.NoError(t, err)
		require.ErrorIs(t, d.Validate(), facts.ErrInvalid)
	})
}

// Validate trusts what NewDraft encoded, and only that.
func TestDraftValidateChecksWhatNewDraftDidNotBuild(t *testing.T) {
	d, err := facts.NewDraft(facts.KindQuestionAnswered, "ingress/k", facts.QuestionAnswered{RequestID: "q", Text: "yes"})
	require.NoError(t, err)
	require.NoError(t, d.Validate())

	literal := facts.Draft{Kind: d.Kind, Cause: d.Cause, Data: bytes.Clone(d.Data)}
	require.NoError(t, literal.Validate(), "the same bytes, checked the long way")

	replaced := d
	replaced.Data = []byte{0x81, 0xa3, 'b', 'a', 'd', 0x01}
	require.ErrorIs(t, replaced.Validate(), facts.ErrPayload)

	rekinded := d
	rekinded.Kind = facts.KindUserMessage
	require.ErrorIs(t, rekinded.Validate(), facts.ErrPayload, "request_id is not a field of user.message")

	uncaused := d
	uncaused.Cause = ""
	require.ErrorIs(t, uncaused.Validate(), facts.ErrInvalid)
}

func TestUnregisteredPayloadIsDeterministic(t *testing.T) {
	payload := map[string]any{}
	for _, k := range strings.Split("q w e r t y u i o p a s d f g h j k l z x c v b n m", " ") {
		payload[k] = map[string]int{"x": 1, "y": 2, "z": 3}
	}
	first, err := facts.NewDraft("app.note", "k", payload)
	require.NoError(t, err)
	for range 20 {
		d, err := facts.NewDraft("app.note", "k", payload)
		require.NoError(t, err)
		require.Equal(t, first.Data, d.Data)
	}
}

func TestDecodeEveryKind(t *testing.T) {
	for i, f := range sampleFacts(t) {
		t.Run(string(f.Kind), func(t *testing.T) {
			typ, ok := facts.Registered(f.Kind)
			require.True(t, ok)
			got, err := decodeAny(f, typ.Name())
			require.NoError(t, err)
			want := samples[i].payload
			// RawJSON is stored compact; compare what it means.
			require.Equal(t, normalize(t, want), normalize(t, got))
		})
	}
}

func TestDecodeRefusesTheWrongType(t *testing.T) {
	f := sampleFacts(t)[0] // user.message
	_, err := facts.Decode[facts.QuestionAnswered](f)
	require.ErrorIs(t, err, facts.ErrPayload)
	require.ErrorContains(t, err, "t1 seq 1 (user.message)")
	require.ErrorContains(t, err, "facts.UserMessage")
}

func TestDecodeNamesThreadSeqAndKind(t *testing.T) {
	f := sampleFacts(t)[0]
	f.Data = []byte{0x81, 0xa4, 't', 'e', 'x', 't', 0x05} // text is an int
	_, err := facts.Decode[facts.UserMessage](f)
	require.ErrorIs(t, err, facts.ErrPayload)
	require.ErrorContains(t, err, "decode t1 seq 1 (user.message)")
}

func TestDecodeUnregisteredKind(t *testing.T) {
	d, err := facts.NewDraft("app.note", "k", struct {
		Title string   `json:"title"`
		Tags  []string `json:"tags"`
	}{"x", []string{"a"}})
	require.NoError(t, err)
	f := facts.Fact{Thread: "t", Seq: 1, Kind: d.Kind, Cause: d.Cause, At: time.Unix(1, 0), Data: d.Data}
	got, err := facts.Decode[map[string]any](f)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"title": "x", "tags": []any{"a"}}, got)

	empty := facts.Fact{Thread: "t", Seq: 1, Kind: "app.ping", Cause: "k", At: time.Unix(1, 0)}
	v, err := facts.Decode[map[string]any](empty)
	require.NoError(t, err)
	require.Nil(t, v)
}

// A path change written before modes were recorded decodes with no modes
// and encodes again to the same bytes, so its fact's hash still verifies;
// modes, when recorded, round-trip.
func TestPathChangeModesAreOptional(t *testing.T) {
	old := facts.ActionInterrupted{ActionID: "a1", Changed: []facts.PathChange{{Path: "run.sh", Before: "1", After: "1"}}}
	d, err := facts.NewDraft(facts.KindActionInterrupted, "k", old)
	require.NoError(t, err)
	require.NotContains(t, string(d.Data), "mode", "no mode, no key")
	// The bytes an older program wrote: {"action_id":"a1","changed":[{"path":"run.sh","before":"1","after":"1"}]}
	written := []byte("\x82\xa9action_id\xa2a1\xa7changed\x91\x83\xa4path\xa6run.sh\xa6before\xa11\xa5after\xa11")
	require.Equal(t, written, d.Data)
	f := facts.Fact{Thread: "t", Seq: 1, Kind: facts.KindActionInterrupted, Cause: "k", At: time.Unix(1, 0), Data: written}
	got, err := facts.Decode[facts.ActionInterrupted](f)
	require.NoError(t, err)
	require.Equal(t, old, got)
	require.False(t, got.Changed[0].ModeChanged())

	withModes := old
	withModes.Changed = []facts.PathChange{{Path: "run.sh", Before: "1", After: "1", BeforeMode: 0o644, AfterMode: 0o755}}
	d, err = facts.NewDraft(facts.KindActionInterrupted, "k", withModes)
	require.NoError(t, err)
	f.Data = d.Data
	got, err = facts.Decode[facts.ActionInterrupted](f)
	require.NoError(t, err)
	require.Equal(t, withModes, got)
	require.True(t, got.Changed[0].ModeChanged())
	js, err := f.MarshalJSON()
	require.NoError(t, err)
	require.Contains(t, string(js), `"before_mode":420,"after_mode":493`)
}

func TestPathChangeModeChanged(t *testing.T) {
	for _, tc := range []struct {
		c    facts.PathChange
		want bool
	}{
		{facts.PathChange{Before: "1", After: "1"}, false},
		{facts.PathChange{BeforeMode: 0o644}, false},
		{facts.PathChange{AfterMode: 0o755}, false},
		{facts.PathChange{BeforeMode: 0o644, AfterMode: 0o644}, false},
		{facts.PathChange{BeforeMode: 0o644, AfterMode: 0o755}, true},
	} {
		require.Equal(t, tc.want, tc.c.ModeChanged(), "%+v", tc.c)
	}
}

// A program must read facts written by a newer program that added fields.
func TestDecodeSkipsFieldsItDoesNotKnow(t *testing.T) {
	f := sampleFacts(t)[0]
	// {"text":"hi","mood":"glad"}
	f.Data = []byte{0x82, 0xa4, 't', 'e', 'x', 't', 0xa2, 'h', 'i', 0xa4, 'm', 'o', 'o', 'd', 0xa4, 'g', 'l', 'a', 'd'}
	got, err := facts.Decode[facts.UserMessage](f)
	require.NoError(t, err)
	require.Equal(t, "hi", got.Text)
	// But appending it is refused: it does not fit this program's kind.
	require.ErrorIs(t, facts.CheckPayload(f.Kind, f.Data), facts.ErrPayload)
}

func TestCheckPayload(t *testing.T) {
	deep := make([]byte, 0, 200)
	for range 100 {
		deep = append(deep, 0x91) // an array of one element, nested
	}
	deep = append(deep, 0x01)
	for _, tc := range []struct {
		name string
		kind facts.Kind
		data []byte
		ok   bool
	}{
		{"fits", facts.KindUserMessage, []byte{0x81, 0xa4, 't', 'e', 'x', 't', 0xa2, 'h', 'i'}, true},
		{"empty map, where the kind needs its text", facts.KindUserMessage, []byte{0x80}, false},
		{"unknown field", facts.KindUserMessage, []byte{0x81, 0xa3, 'f', 'o', 'o', 0x01}, false},
		{"wrong type", facts.KindUserMessage, []byte{0x81, 0xa4, 't', 'e', 'x', 't', 0x05}, false},
		{"not a map", facts.KindUserMessage, []byte{0x91, 0xa2, 'h', 'i'}, false},
		{"nil", facts.KindUserMessage, []byte{0xc0}, false},
		{"no bytes", facts.KindUserMessage, nil, false},
		{"truncated", facts.KindUserMessage, []byte{0x81, 0xa4, 't', 'e', 'x', 't', 0xa2, 'h'}, false},
		{"trailing bytes", facts.KindUserMessage, []byte{0x80, 0x80}, false},
		{"missing required field", facts.KindQuestionAnswered, []byte{0x81, 0xa4, 't', 'e', 'x', 't', 0xa2, 'h', 'i'}, false},
		{"unregistered, no bytes", "app.ping", nil, true},
		{"unregistered, a value", "app.ping", []byte{0x92, 0x01, 0xa1, 'x'}, true},
		{"unregistered, truncated", "app.ping", []byte{0x92, 0x01}, false},
		{"unregistered, trailing", "app.ping", []byte{0x01, 0x02}, false},
		{"unregistered, huge claimed length", "app.ping", []byte{0xdd, 0xff, 0xff, 0xff, 0xff}, false},
		{"unregistered, never-used code", "app.ping", []byte{0xc1}, false},
		{"unregistered, too deep", "app.ping", deep, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := facts.CheckPayload(tc.kind, tc.data)
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, facts.ErrPayload)
			}
		})
	}
}

type deployDone struct {
	Service string `msgpack:"service" json:"service"`
	Version int    `msgpack:"version" json:"version"`
}

func TestRegisterAKindOfYourOwn(t *testing.T) {
	const kind facts.Kind = "test.deploy_done"
	facts.Register[deployDone](kind)
	facts.Register[deployDone](kind) // again, same type: no-op

	d, err := facts.NewDraft(kind, "deploy/1", deployDone{"api", 7})
	require.NoError(t, err)
	f := facts.Fact{Thread: "t", Seq: 1, Kind: kind, Cause: d.Cause, At: time.Unix(5, 0).UTC(), Data: d.Data}
	got, err := facts.Decode[deployDone](f)
	require.NoError(t, err)
	require.Equal(t, deployDone{"api", 7}, got)

	_, err = facts.NewDraft(kind, "deploy/1", facts.UserMessage{})
	require.ErrorIs(t, err, facts.ErrPayload)
}

func TestRegisterRefuses(t *testing.T) {
	type withMap struct{ M map[string]int }
	type withAny struct{ V []any }
	type nested struct{ Inner struct{ M map[string]string } }
	for _, tc := range []struct {
		name     string
		register func()
	}{
		{"a kind taken by another type", func() { facts.Register[deployDone](facts.KindUserMessage) }},
		{"a bad kind", func() { facts.Register[deployDone]("bad kind") }},
		{"a pointer type", func() { facts.Register[*deployDone]("test.ptr") }},
		{"a map field", func() { facts.Register[withMap]("test.map") }},
		{"an interface element", func() { facts.Register[withAny]("test.any") }},
		{"a nested map", func() { facts.Register[nested]("test.nested") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Panics(t, tc.register)
		})
	}
	_, ok := facts.Registered("test.map")
	require.False(t, ok)
}

func TestErrorsAreDistinct(t *testing.T) {
	all := []error{facts.ErrInvalid, facts.ErrPayload, facts.ErrCorrupt, facts.ErrVersion, facts.ErrHashMismatch}
	for i, a := range all {
		for j, b := range all {
			require.Equal(t, i == j, errors.Is(a, b))
		}
	}
}
