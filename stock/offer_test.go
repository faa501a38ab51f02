package stock_test

import (
	"cmp"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/tools"
)

// mergeRuntime is ownRuntime with the merge mode mode.
func mergeRuntime(t *testing.T, root, mode, script string) (*harness.Runtime, *stock.Stock) {
	t.Helper()
	return ownRuntimeWith(t, root, t.TempDir(), script, func(c *harness.Config) { c.WorktreeMerge = mode })
}

// twoWriters: t1 and t2 (and t3) each write a.txt their own way, then
// are done.
const twoWriters = `{"thread": "t1", "text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"a.txt\",\"content\":\"ttl = 300\\n\"}"}]}
{"thread": "t1", "text": "Done: 300."}
{"thread": "t1", "text": "Nothing more."}
{"thread": "t2", "text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"a.txt\",\"content\":\"ttl = 600\\n\"}"}]}
{"thread": "t2", "text": "Done: 600."}
{"thread": "t3", "text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"b.txt\",\"content\":\"new\\n\"}"}]}
{"thread": "t3", "text": "Done."}`

// writeAndFinish runs the thread id to its end: its write approved, it
// is done, and its end (with a change) offers the merge. It returns the
// outcome.
func writeAndFinish(t *testing.T, th *harness.Thread, task string) harness.Outcome {
	t.Helper()
	_, err := th.Submit(ctx, task)
	require.NoError(t, err)
	out, err := th.Resume(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	_, err = th.Post(ctx, mustDraft(t, facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: out.Waits[0].RequestID, Approved: true, By: "tester"}), "w-"+th.ID())
	require.NoError(t, err)
	out, err = th.Resume(ctx)
	require.NoError(t, err)
	return out
}

// answer posts a person's answer to the thread's request and resumes.
func answer(t *testing.T, th *harness.Thread, request string, approved bool) harness.Outcome {
	t.Helper()
	a := facts.ConfirmationAnswered{RequestID: request, Approved: approved, By: "tester"}
	if !approved {
		a.Then = facts.DenyContinue // as a policy's denial says
	}
	_, err := th.Post(ctx, mustDraft(t, facts.KindConfirmationAnswered, a), "a-"+request)
	require.NoError(t, err)
	out, err := th.Resume(ctx)
	require.NoError(t, err)
	return out
}

// completion is the action.completed of action id in log.
func completion(t *testing.T, log []facts.Fact, id string) facts.ActionCompleted {
	t.Helper()
	for _, f := range log {
		if f.Kind == facts.KindActionCompleted {
			if c := decode[facts.ActionCompleted](t, f); c.ActionID == id {
				return c
			}
		}
	}
	t.Fatalf("no completion of %s", id)
	return facts.ActionCompleted{}
}

// Two threads, each in a worktree of its own (as a worker's are), write
// a.txt differently; each observes only its own change. Each one's end
// offers the merge of its branch: a write parked for a person, shown
// with the branch's diff, on every front end's one state. Approved, the
// first applies; the second conflicts — its action fails naming the
// file, the workspace keeps the first, the branch keeps the second —
// and a third, denied, leaves its change on its branch, named. Every
// log verifies.
func TestWorktreeEndOffersTheMerge(t *testing.T) {
	root, _ := gitRepo(t)
	rt, st := mergeRuntime(t, root, "", twoWriters)
	t1, t2, t3 := rt.Thread(st.Actor, "t1"), rt.Thread(st.Actor, "t2"), rt.Thread(st.Actor, "t3")
	for _, c := range []struct {
		th   *harness.Thread
		want string
	}{{t1, "+ttl = 300"}, {t2, "+ttl = 600"}, {t3, "+new"}} {
		out := writeAndFinish(t, c.th, "Set it")
		require.Equal(t, harness.StatusParked, out.Status, "%s: its end waits for a person", c.th.ID())
		require.Len(t, out.Waits, 1)
		w := out.Waits[0]
		require.Equal(t, fold.WaitConfirmation, w.Kind)
		require.True(t, strings.HasPrefix(w.RequestID, "merge-"), w.RequestID)
		require.Contains(t, w.Summary, "branch harness/"+c.th.ID())

		// The one state every front end reads: the merge, its diff.
		s, err := drive.Inspect(ctx, c.th)
		require.NoError(t, err)
		require.Equal(t, harness.StatusParked, s.Status)
		s.Preview(root, tools.Preview)
		require.Len(t, s.Waits, 1)
		require.Equal(t, tools.MergeWorktree, s.Waits[0].Tool)
		require.Contains(t, s.Waits[0].Args, `"branch":"harness/`+c.th.ID()+`"`)
		require.NotEmpty(t, s.Waits[0].Digest)
		require.Contains(t, s.Waits[0].Preview, c.want)

		// Its own change only, observed in its worktree; the workspace
		// untouched.
		log := readLog(t, rt.Store, c.th.ID())
		w1 := completion(t, log, "1-w")
		require.Len(t, w1.Observation.Changed, 1)
		require.Empty(t, w1.Observation.Others)
		fin := decode[facts.WorktreeResult](t, lastOf(t, log, facts.KindWorktreeFinished))
		require.True(t, fin.Offered)
		require.Empty(t, fin.Kept)
		require.Equal(t, "ttl = 60\n", read(t, root, "a.txt"))
	}

	// Approved: merged, observed in the workspace; the thread is done,
	// and no model turn follows.
	out := answer(t, t1, mergeRequest(t, rt, "t1"), true)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Equal(t, "ttl = 300\n", read(t, root, "a.txt"))
	log := readLog(t, rt.Store, "t1")
	c := completion(t, log, mergeRequest(t, rt, "t1"))
	require.Equal(t, facts.StatusSucceeded, c.Report.Status)
	require.Equal(t, facts.EffectObserved, c.EffectState)
	require.Equal(t, "a.txt", c.Observation.Changed[0].Path)
	require.Equal(t, facts.KindActionCompleted, log[len(log)-1].Kind, "nothing after the merge")

	// The second conflicts: reported, naming the file; nothing lost.
	out = answer(t, t2, mergeRequest(t, rt, "t2"), true)
	require.Equal(t, harness.StatusDone, out.Status)
	c = completion(t, readLog(t, rt.Store, "t2"), mergeRequest(t, rt, "t2"))
	require.Equal(t, facts.StatusFailed, c.Report.Status)
	require.Contains(t, c.Report.Error, "a.txt conflicts with the workspace: nothing was changed, and branch harness/t2 keeps its change")
	require.Equal(t, "ttl = 300\n", read(t, root, "a.txt"))
	require.Equal(t, "ttl = 600\n", gitShow(t, root, "harness/t2:a.txt"))

	// Denied: nothing applied, the branch named in the record.
	out = answer(t, t3, mergeRequest(t, rt, "t3"), false)
	require.Equal(t, harness.StatusDone, out.Status)
	c = completion(t, readLog(t, rt.Store, "t3"), mergeRequest(t, rt, "t3"))
	require.Equal(t, facts.StatusDenied, c.Report.Status)
	require.Contains(t, c.Report.Error, "branch harness/t3 keeps the change")
	require.NoFileExists(t, root+"/b.txt")
	require.Equal(t, "new\n", gitShow(t, root, "harness/t3:b.txt"))

	for _, id := range []string{"t2", "t3"} {
		require.NoError(t, audit.VerifyLog(ctx, rt.Store, st.Actor, id), id)
	}
	// A forged offer of another branch, written into the store as the
	// runtime would (nothing posts one: it is the runtime's), does not
	// verify: an offer names the thread's own work.
	forged := mustDraft(t, facts.KindWorktreeFinished, facts.WorktreeResult{Branch: "harness/t2", Base: fin(t, rt, "t3").Base,
		Head: fin(t, rt, "t2").Head, Changed: []string{"a.txt"}, Offered: true})
	forged.Cause = facts.IngressCause(facts.WorktreeFinishedKey(999))
	_, err := t3.Post(ctx, forged, facts.WorktreeFinishedKey(999))
	require.ErrorContains(t, err, "not a kind that can be posted")
	head, err := rt.Store.Head(ctx, "t3")
	require.NoError(t, err)
	_, err = rt.Store.Append(ctx, "t3", head.Seq, forged)
	require.NoError(t, err)
	require.ErrorContains(t, audit.VerifyLog(ctx, rt.Store, st.Actor, "t3"), "not the thread's own worktree's")

	// Taken up again after its merge, changing nothing: it ends again
	// (its worktree is gone) and offers nothing it offered before.
	_, err = t1.Post(ctx, mustDraft(t, facts.KindUserMessage, facts.UserMessage{Text: "Anything else?"}), "more")
	require.NoError(t, err)
	out, err = t1.Resume(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	again := readLog(t, rt.Store, "t1")
	require.Equal(t, facts.KindWorktreeFinished, again[len(again)-1].Kind)
	require.False(t, decode[facts.WorktreeResult](t, again[len(again)-1]).Offered)
	require.NoError(t, audit.VerifyLog(ctx, rt.Store, st.Actor, "t1"))

	for _, id := range []string{"t2"} {
		// Resumed again, a done thread stays as it is: one end, one offer.
		out, err := rt.Thread(st.Actor, id).Resume(ctx)
		require.NoError(t, err)
		require.Equal(t, harness.StatusDone, out.Status)
		n := 0
		for _, f := range readLog(t, rt.Store, id) {
			if f.Kind == facts.KindWorktreeFinished {
				n++
			}
		}
		require.Equal(t, 1, n, id)
	}
}

// With worktree_merge branch, the end offers nothing: the thread is
// done, its change on its branch, named; the workspace untouched.
func TestWorktreeEndLeavesABranch(t *testing.T) {
	root, _ := gitRepo(t)
	rt, st := mergeRuntime(t, root, facts.WorktreeMergeBranch, twoWriters)
	out := writeAndFinish(t, rt.Thread(st.Actor, "t1"), "Set it")
	require.Equal(t, harness.StatusDone, out.Status)
	log := readLog(t, rt.Store, "t1")
	require.Equal(t, facts.WorktreeMergeBranch, decode[facts.SystemConfigured](t, log[1]).WorktreeMerge)
	fin := decode[facts.WorktreeResult](t, log[len(log)-1])
	require.False(t, fin.Offered)
	require.Equal(t, "harness/t1", fin.Branch)
	require.Equal(t, []string{"a.txt"}, fin.Changed)
	require.Equal(t, "ttl = 60\n", read(t, root, "a.txt"))
	require.NoError(t, audit.VerifyLog(ctx, rt.Store, st.Actor, "t1"))
}

// A log written before ends offered anything — no worktree_merge on its
// configuration, no offered on its worktree.finished — still folds as
// it did (done, waiting for nothing), verifies, and a resume appends
// nothing: nothing is offered after the fact.
func TestWorktreeFinishedOfAnOldLog(t *testing.T) {
	root, _ := gitRepo(t)
	rt, st := mergeRuntime(t, root, facts.WorktreeMergeBranch, twoWriters)
	require.Equal(t, harness.StatusDone, writeAndFinish(t, rt.Thread(st.Actor, "t1"), "Set it").Status)
	// The old log: the same facts, as a build before offers wrote them.
	var drafts []facts.Draft
	for _, f := range readLog(t, rt.Store, "t1") {
		d := facts.Draft{Kind: f.Kind, Cause: f.Cause, Data: f.Data}
		if f.Kind == facts.KindSystemConfigured {
			sc := decode[facts.SystemConfigured](t, f)
			sc.WorktreeMerge = ""
			d = mustDraft(t, f.Kind, sc)
			d.Cause = f.Cause
		}
		drafts = append(drafts, d)
	}
	old, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, old.Close()) })
	_, err = old.Append(ctx, "t1", 0, drafts...)
	require.NoError(t, err)
	ort, err := harness.NewRuntime(old, rt.Services, rt.Config)
	require.NoError(t, err)
	th := ort.Thread(st.Actor, "t1")
	s, err := drive.Inspect(ctx, th)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, s.Status)
	require.Empty(t, s.Waits)
	require.NoError(t, audit.VerifyLog(ctx, old, st.Actor, "t1"))
	out, err := th.Resume(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Len(t, readLog(t, old, "t1"), len(drafts))
}

// mergeRequest is the request of the merge thread id's end offered.
func mergeRequest(t *testing.T, rt *harness.Runtime, id string) string {
	t.Helper()
	for _, f := range readLog(t, rt.Store, id) {
		if f.Kind == facts.KindConfirmationRequested {
			if p := decode[facts.ConfirmationRequested](t, f); strings.HasPrefix(p.RequestID, "merge-") {
				return p.RequestID
			}
		}
	}
	t.Fatalf("%s offered no merge", id)
	return ""
}

func lastOf(t *testing.T, log []facts.Fact, k facts.Kind) facts.Fact {
	t.Helper()
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Kind == k {
			return log[i]
		}
	}
	t.Fatalf("no %s", k)
	return facts.Fact{}
}

func gitShow(t *testing.T, root, what string) string {
	t.Helper()
	cmd := exec.Command("git", "show", what)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

// fin is the first worktree.finished of thread id.
func fin(t *testing.T, rt *harness.Runtime, id string) facts.WorktreeResult {
	t.Helper()
	for _, f := range readLog(t, rt.Store, id) {
		if f.Kind == facts.KindWorktreeFinished {
			return decode[facts.WorktreeResult](t, f)
		}
	}
	t.Fatalf("%s: no worktree.finished", id)
	return facts.WorktreeResult{}
}

// A thread that writes, in its worktree, where the file tools never
// write (.harness, here by a command) offers a merge that applies
// nothing: the merge fails naming the path, the workspace unchanged.
func TestOfferedMergeRefusesProtectedPaths(t *testing.T) {
	root, _ := gitRepo(t)
	rt, st := mergeRuntime(t, root, "", `{"thread": "t1", "text": "Writing.", "tool_calls": [{"id": "w", "name": "run_command", "args": "{\"command\":\"mkdir -p sub/.harness && echo evil > sub/.harness/config.json && echo y > b.txt\"}"}]}
{"thread": "t1", "text": "Done."}`)
	th := rt.Thread(st.Actor, "t1")
	out := writeAndFinish(t, th, "Do it")
	require.Equal(t, harness.StatusParked, out.Status)
	log := readLog(t, rt.Store, "t1")
	require.Equal(t, facts.StatusSucceeded, completion(t, log, "1-w").Report.Status, "the command ran in the worktree")
	require.Equal(t, []string{"b.txt", "sub/.harness/config.json"}, fin(t, rt, "t1").Changed)
	out = answer(t, th, mergeRequest(t, rt, "t1"), true)
	require.Equal(t, harness.StatusDone, out.Status)
	c := completion(t, readLog(t, rt.Store, "t1"), mergeRequest(t, rt, "t1"))
	require.Equal(t, facts.StatusFailed, c.Report.Status)
	require.Contains(t, c.Report.Error, "sub/.harness/config.json")
	require.NoFileExists(t, root+"/b.txt")
	require.NoDirExists(t, root+"/sub")
	require.NoError(t, audit.VerifyLog(ctx, rt.Store, st.Actor, "t1"))
}

// A thread whose last model turn is done but whose worktree is not yet
// finished (its process died in between, or it is being finished) is
// not done: a resume has that to do; the resume finishes it.
func TestUnfinishedWorktreeIsNotDone(t *testing.T) {
	root, _ := gitRepo(t)
	rt, st := mergeRuntime(t, root, facts.WorktreeMergeBranch, twoWriters)
	require.Equal(t, harness.StatusDone, writeAndFinish(t, rt.Thread(st.Actor, "t1"), "Set it").Status)
	log := readLog(t, rt.Store, "t1")
	require.Equal(t, facts.KindWorktreeFinished, log[len(log)-1].Kind)
	var drafts []facts.Draft
	for _, f := range log[:len(log)-1] {
		drafts = append(drafts, facts.Draft{Kind: f.Kind, Cause: f.Cause, Data: f.Data})
	}
	cut, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cut.Close()) })
	_, err = cut.Append(ctx, "t1", 0, drafts...)
	require.NoError(t, err)
	crt, err := harness.NewRuntime(cut, rt.Services, rt.Config)
	require.NoError(t, err)
	th := crt.Thread(st.Actor, "t1")
	s, err := drive.Inspect(ctx, th)
	require.NoError(t, err)
	require.Equal(t, harness.StatusResumable, s.Status)
	out, err := th.Resume(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	again := readLog(t, cut, "t1")
	require.Equal(t, facts.KindWorktreeFinished, again[len(again)-1].Kind)
	require.Equal(t, fin(t, rt, "t1").Head, decode[facts.WorktreeResult](t, again[len(again)-1]).Head)
	s, err = drive.Inspect(ctx, th)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, s.Status)
}

// worktree_merge from a repository's file that is not trusted: branch
// (offer nothing) applies; ask over the person's branch does not.
func TestWorktreeMergeFromAnUntrustedFile(t *testing.T) {
	for _, c := range []struct {
		name, user, flag, project, want string
	}{
		{"a project chooses branch", "", "", `{"worktree_merge": "branch"}`, facts.WorktreeMergeBranch},
		{"a project asks over the person's branch", `{"worktree_merge": "branch"}`, "", `{"worktree_merge": "ask"}`, facts.WorktreeMergeBranch},
		{"the person asks over a project's branch", "", facts.WorktreeMergeAsk, `{"worktree_merge": "branch"}`, facts.WorktreeMergeAsk},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			writeProject(t, root, c.project)
			place, err := stock.Locate(root, "")
			require.NoError(t, err)
			o := stock.SessionOptions{Getenv: sessionEnv(t, c.user), Drive: true}
			if c.flag != "" {
				o.Flags = stock.FlagSource(stock.Settings{WorktreeMerge: c.flag}, "worktree_merge")
			}
			s, err := stock.NewSession(place, o)
			require.NoError(t, err)
			defer s.Close()
			require.Equal(t, c.want, cmp.Or(s.Config().WorktreeMerge, facts.WorktreeMergeAsk))
		})
	}
}
