package tell_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/tell"
	"github.com/seed-7cc7a084/harness/thread"
)

// fact is a fact of kind k with payload p at seq.
func fact(t *testing.T, seq uint64, k facts.Kind, p any) facts.Fact {
	t.Helper()
	d, err := facts.NewDraft(k, "ingress/x", p)
	require.NoError(t, err)
	return facts.Fact{Thread: "t1", Seq: seq, Kind: d.Kind, Cause: d.Cause, Data: d.Data, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// brackets paints as [color:s], so a test sees what is painted.
func brackets(color, s string) string { return "[" + color + ":" + s + "]" }

func TestAuditAndTree(t *testing.T) {
	ended := fact(t, 1, facts.KindThreadEnded, facts.ThreadEnded{Status: "done", Turns: 1, Tokens: 10})
	record := audit.Audit{Thread: "t1", Status: harness.StatusDone, Reason: "all\nfine\x1b[2J",
		Entries: []audit.AuditEntry{{Fact: ended, Action: &audit.ActionAudit{ActionID: "1-a",
			Report:      facts.Report{Status: "succeeded", ClaimedState: "wrote\x1b]0;pwned\x07 it"},
			EffectState: "observed", Flag: "reported success, nothing changed"}}}}
	var b bytes.Buffer
	tell.Tree(&b, []audit.TreeAudit{{Audit: record, Spawn: &scheduler.Call{Ref: "1-d\x1b[31m"}}}, "", brackets)
	out := b.String()
	want := "[bold:child t1]\n" +
		"    replay of thread t1\n" +
		"    " + tell.FactLine(ended) + "\n" +
		"            report           succeeded; claims wrote\\x1b]0;pwned\\x07 it\n" +
		"            observation      not observed (nobody looked)\n" +
		"            effect           observed\n" +
		"            check            none declared\n" +
		"            [yellow:⚑ flag]  reported success, nothing changed\n" +
		"    status: done (all fine\\x1b[2J)\n"
	require.Equal(t, want, out)
	require.NotContains(t, out, "\x1b", "nothing from the log reaches the terminal unescaped")
	require.Equal(t, 1, tell.TreeSize([]audit.TreeAudit{{Audit: record}}))
}

func TestVerified(t *testing.T) {
	var b bytes.Buffer
	require.True(t, tell.Verified(&b, audit.Audit{Entries: make([]audit.AuditEntry, 3)}, nil, nil))
	require.Equal(t, "verified: 3 facts: the hash chain is intact, every caused fact was enabled by the fold at its position, every action record is consistent\n", b.String())
	b.Reset()
	verr := &audit.VerifyError{Thread: "t1", Seq: 2, Kind: "x", Cause: "c", Reason: "bad\n\x1b[1Ahash"}
	require.False(t, tell.Verified(&b, audit.Audit{}, verr, brackets))
	require.Equal(t, "[red:verification failed:] thread t1 at seq 2 (x, cause c): bad \\x1b[1Ahash\n", b.String())
	b.Reset()
	tell.TreeVerified(&b, 1, nil)
	require.Equal(t, "verified: the tree: 1 child thread verifies, each spawn has its child, and each report names its child's final head\n", b.String())
}

func TestAuditDocOf(t *testing.T) {
	f := fact(t, 1, facts.KindThreadEnded, facts.ThreadEnded{Status: "done"})
	doc := tell.AuditDocOf(audit.Audit{Thread: "t1", Entries: []audit.AuditEntry{{Fact: f}}}, true,
		&audit.VerifyError{Thread: "t1", Seq: 1, Kind: "k", Reason: "r"}, nil)
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	require.JSONEq(t, `{"thread":"t1","entries":[{"seq":1,"kind":"thread.ended","cause":"ingress/x","at":"2026-01-02T03:04:05Z",
		"summary":`+mustJSON(t, f)+`}],"verify":{"ok":false,"error":`+mustJSON(t, (&audit.VerifyError{Thread: "t1", Seq: 1, Kind: "k", Reason: "r"}).Error())+`,"seq":1,"kind":"k","reason":"r"}}`, string(b))
	b, err = json.Marshal(tell.AuditDocOf(audit.Audit{Thread: "t1"}, false, nil, nil))
	require.NoError(t, err)
	require.JSONEq(t, `{"thread":"t1","entries":[]}`, string(b), "an empty audit still lists its entries, and says nothing of a verification it did not make")
}

// mustJSON is v as JSON; a fact stands for its summary.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	if f, ok := v.(facts.Fact); ok {
		v = strings.TrimSpace(strings.TrimPrefix(tell.FactLine(f), "   1  thread.ended           "))
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestEffects(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, tell.Effects(&b, nil, nil))
	require.Equal(t, "no actions\n", b.String())
	b.Reset()
	es := []audit.Effect{
		{Thread: "t1", ActionID: "1-a", Tool: "run_command", Stage: scheduler.StageStarted, InDoubt: true, Open: true},
		{Thread: "t1", ActionID: "1-b", By: "someone\x1b[2K", Changed: []string{"a.go", "b\ngo"}, State: "unknown"},
		{Thread: "t1", ActionID: "1-b", Tool: "write_file", State: "observed", Report: "succeeded", Check: "passed", Decision: "accepted"},
	}
	require.NoError(t, tell.Effects(&b, es, brackets))
	require.Equal(t, `THREAD  ACTION      TOOL               REPORT     EFFECT    CHECK   CHANGED     OPEN
t1      1-a         run_command        -          in doubt  -       -           [yellow:open]
t1      before 1-b  by someone\x1b[2K  -          unknown   -       a.go, b go  -
t1      1-b         write_file         succeeded  observed  passed  -           settled: accepted
`, b.String())
	require.Equal(t, []audit.Effect{}, tell.EffectDocs(nil), "no effects are an empty list in JSON, not null")
}

func TestUndo(t *testing.T) {
	plan := rewind.UndoPlan{Steps: []rewind.UndoStep{
		{Path: "gone.txt", Left: "d1", Seqs: []uint64{3}},
		{Path: "new\x1b[8m.txt", Restore: "d2", RestoreMode: 0o755, Seqs: []uint64{4, 6}},
		{Path: "x.sh", Left: "d3", Restore: "d3", LeftMode: 0o755, RestoreMode: 0o644, Seqs: []uint64{7}},
		{Path: "y", Left: "d4", Restore: "d5", Seqs: []uint64{8}},
	}}
	var b bytes.Buffer
	tell.Undo(&b, "t1", 2, true, plan)
	require.Equal(t, `would restore 4 paths to how they were at seq 2 of t1:
  remove   gone.txt (changed at seq 3)
  recreate new\x1b[8m.txt (mode 0755, changed at seq 4, 6)
  chmod    x.sh (mode 0755 → 0644, changed at seq 7)
  restore  y (changed at seq 8)
dry run: nothing was changed
`, b.String())
	b.Reset()
	tell.Undo(&b, "t1", 2, false, rewind.UndoPlan{Steps: plan.Steps[3:]})
	require.Equal(t, "restored 1 path to how it was at seq 2 of t1:\n  restore  y (changed at seq 8)\n", b.String())
	b.Reset()
	tell.Undo(&b, "t1", 0, false, rewind.UndoPlan{})
	require.Equal(t, "nothing to undo: the files t1 changed after seq 0 hold what they held then\n", b.String())
	doc := tell.UndoDocOf("t1", 2, false, plan)
	require.Equal(t, "chmod", doc.Steps[2].Action())
	require.Equal(t, []rewind.UndoStep{}, tell.UndoDocOf("t1", 0, false, rewind.UndoPlan{}).Steps)
}

func TestThreads(t *testing.T) {
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	rows := []drive.State{
		{Thread: "t1", Status: harness.StatusParked, Title: "fix\nthe\x1b[2J bug", Model: "scripted:/tmp/x/evil\x1b]0;t\x07.json", Tokens: 1500,
			Waits: []drive.Pending{{}}, Head: thread.Head{At: now.Add(-5 * time.Minute)}},
		{Thread: "t1.1-d", Status: harness.StatusFailed, Reason: "model: 500", Head: thread.Head{At: now.Add(-3 * time.Hour)}},
		{Thread: "t2", Unreadable: "bad hash", Head: thread.Head{At: now.Add(-30 * 24 * time.Hour)}},
	}
	rows[0].Waits[0].Kind, rows[0].Waits[0].RequestID = "confirmation", "1-call_1"
	var b bytes.Buffer
	require.NoError(t, tell.Threads(&b, rows, []int{0, 1, 0}, now))
	out := b.String()
	require.NotContains(t, out, "\x1b", "a recorded model spec or title cannot reach the terminal unescaped")
	lines := strings.Split(out, "\n")
	require.Equal(t, "THREAD    STATUS      WAITS FOR              LAST ACTIVITY  TOKENS  MODEL                           TITLE", lines[0])
	require.Contains(t, lines[1], `confirmation 1-call_1  5m ago         1500    scripted:evil\x1b]0;t\x07.json  fix the\x1b[2J bug`)
	require.True(t, strings.HasPrefix(lines[2], "  t1.1-d  failed      model: 500             3h ago         -       -"), lines[2])
	require.True(t, strings.HasPrefix(lines[3], "t2        unreadable  bad hash               2025-12-03"), lines[3])
}

func TestChildrenAndAgo(t *testing.T) {
	st := drive.State{Children: []drive.State{{Thread: "t1.1-d", Status: harness.StatusFailed, Reason: "x\x1b[2J",
		Children: []drive.State{{Thread: "t1.1-d.1-e", Status: harness.StatusParked}}}}}
	var b bytes.Buffer
	tell.Children(&b, st, "  ")
	require.Equal(t, "  child t1.1-d: failed: x\\x1b[2J\n    child t1.1-d.1-e: parked\n", b.String())
	now := time.Date(2026, 1, 9, 0, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{time.Second: "just now", 2 * time.Minute: "2m ago", 5 * time.Hour: "5h ago", 50 * time.Hour: "2d ago"} {
		require.Equal(t, want, tell.Ago(now, now.Add(-d)))
	}
}

func TestIndented(t *testing.T) {
	var b bytes.Buffer
	in := &tell.Indented{W: &b, Prefix: "> "}
	for _, s := range []string{"a", "b\nc\n", "\nd"} {
		_, err := in.Write([]byte(s))
		require.NoError(t, err)
	}
	require.Equal(t, "> ab\n> c\n> \n> d", b.String())
}

func TestActionShowsTheCommandEscaped(t *testing.T) {
	act := scheduler.Action{ID: "1-c", RequestedSeq: 3, Requested: facts.ActionRequested{Adapter: "run_command", Capability: "exec", RequestedBy: "model"},
		Completed: &facts.ActionCompleted{Report: facts.Report{Status: "succeeded", Stdout: "ok\n\x1b[2Jgone\n"}, EffectState: "observed"}, CompletedSeq: 5}
	doc := drive.ActionDoc{Args: `{"command":"echo hi\nrm -rf /tmp/\u001b[8mx","timeout_seconds":2}`}
	var b bytes.Buffer
	tell.Action(&b, "t1", act, scheduler.Call{}, doc, time.Minute)
	out := b.String()
	require.NotContains(t, out, "\x1b")
	require.Contains(t, out, "action 1-c of thread t1: run_command (exec), requested by model at seq 3\n  command      timeout 2s\n    │ echo hi\n    │ rm -rf /tmp/\\x1b[8mx\n")
	require.Contains(t, out, "  stdout       12 bytes\n    │ ok\n    │ \\x1b[2Jgone\n")
	b.Reset()
	tell.Action(&b, "t1", scheduler.Action{ID: "1-w", Requested: facts.ActionRequested{Adapter: "write_file"}}, scheduler.Call{}, drive.ActionDoc{Args: `{"path":"a"}`}, 0)
	require.Contains(t, b.String(), "  arguments\n    {\n      \"path\": \"a\"\n    }\n")
}

func TestTurnSaysWhatWasNotKept(t *testing.T) {
	mt := facts.ModelTurn{Turn: 2, Text: "hi\x1b[2J", Exchange: &facts.ExchangeRef{Provider: "openai", URL: "http://x", Status: 200, Size: 9}}
	f := fact(t, 4, facts.KindModelTurn, mt)
	var b bytes.Buffer
	tell.Turn(&b, "t1", f, mt, tell.Exchange{Request: []byte(`{"a":1}`), ResponseErr: errors.New("not kept\x1b[2J")})
	out := b.String()
	require.NotContains(t, out, "\x1b")
	require.Contains(t, out, "  text\n    hi\\x1b[2J\n  tokens  0 in, 0 out\n  exchange  openai http://x → 200, 9 bytes\n  request (7 bytes)\n    {\n      \"a\": 1\n    }\n  response  not kept\\x1b[2J\n")
}

// A fact of the tree's root is its line; a child's is indented under it,
// naming the child (dimmed), its description escaped.
func TestTreeFactLine(t *testing.T) {
	f := fact(t, 3, facts.KindUserMessage, facts.UserMessage{Text: "hi\x1b[2J"})
	require.Equal(t, tell.FactLine(f), tell.TreeFactLine(f, "t1", brackets))
	require.Equal(t, "  [dim:t1] "+tell.FactLine(f), tell.TreeFactLine(f, "t0", brackets))
	require.Equal(t, "  t1 "+tell.FactLine(f), tell.TreeFactLine(f, "t0", nil))
	require.NotContains(t, tell.TreeFactLine(f, "t0", nil), "\x1b")
}
