package stock_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/tools"
)

// basesOf is headsOf that also names a branch's base as "@base:BRANCH@":
// the commit before its head (a child that wrote commits once, at its
// end), what a model copies from a child's report.
type basesOf struct{ headsOf }

func (b basesOf) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	d, err := b.headsOf.Turn(ctx, req)
	for i, c := range d.ToolCalls {
		for {
			at := strings.Index(c.Args, "@base:")
			if at < 0 {
				break
			}
			end := strings.Index(c.Args[at+1:], "@") + at + 1
			out, gerr := exec.Command("git", "-C", b.root, "rev-parse", "refs/heads/"+c.Args[at+6:end]+"^").Output()
			if gerr != nil {
				return d, gerr
			}
			c.Args = c.Args[:at] + strings.TrimSpace(string(out)) + c.Args[end+1:]
		}
		d.ToolCalls[i] = c
	}
	return d, err
}

// A thread in a worktree of its own (a worker's) writes a file there,
// then delegates two children in parallel: their worktrees are made of
// the parent's worktree, not of the workspace, so each sees the parent's
// file; each edits it in its own place and observes only its own change.
// Both branches merge back into the parent's worktree — the second three
// ways, the parent's worktree having moved with the first — and nothing
// is lost: the parent's end offers the workspace both edits on top of
// its file, and the workspace is untouched until that is approved.
func TestParallelChildrenOfAWorktreeThread(t *testing.T) {
	root, _ := gitRepo(t)
	const parentFile = "1\n2\n3\n4\n5\n6\n"
	b1, b2 := "harness/p.2-d1", "harness/p.2-d2"
	script := `{"thread": "p", "text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"shared.txt\",\"content\":\"1\\n2\\n3\\n4\\n5\\n6\\n\"}"}]}
{"thread": "p", "text": "Two at once.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Line 2\",\"tools\":[\"read_file\",\"write_file\"]}"}, {"id": "d2", "name": "delegate", "args": "{\"task\":\"Line 5\",\"tools\":[\"read_file\",\"write_file\"]}"}]}
{"thread": "p", "text": "Merging both.", "tool_calls": [{"id": "m1", "name": "merge_worktree", "args": "{\"branch\":\"` + b1 + `\",\"base\":\"@base:` + b1 + `@\",\"head\":\"@head:` + b1 + `@\"}"}, {"id": "m2", "name": "merge_worktree", "args": "{\"branch\":\"` + b2 + `\",\"base\":\"@base:` + b2 + `@\",\"head\":\"@head:` + b2 + `@\"}"}]}
{"thread": "p", "text": "Both merged."}
{"thread": "p.2-d1", "text": "Reading.", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"shared.txt\"}"}]}
{"thread": "p.2-d1", "text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"shared.txt\",\"content\":\"1\\ntwo\\n3\\n4\\n5\\n6\\n\"}"}]}
{"thread": "p.2-d1", "text": "Done: two."}
{"thread": "p.2-d2", "text": "Reading.", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"shared.txt\"}"}]}
{"thread": "p.2-d2", "text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"shared.txt\",\"content\":\"1\\n2\\n3\\n4\\nfive\\n6\\n\"}"}]}
{"thread": "p.2-d2", "text": "Done: five."}`

	rt, st := ownRuntimeWith(t, root, t.TempDir(), `{"text": "replaced below"}`, func(*harness.Config) {})
	sm, err := model.ParseScript("stock", []byte(script))
	require.NoError(t, err)
	rt.Services.Model = basesOf{headsOf{sm, root}}
	th := rt.Thread(st.Actor, "p")
	_, err = th.Submit(ctx, "Edit shared.txt, two helpers at once")
	require.NoError(t, err)
	_, err = th.Resume(ctx)
	require.NoError(t, err)

	all, err := drive.NewApproval("all", nil, nil)
	require.NoError(t, err)
	merges := 0
	for range 30 {
		s, err := drive.Inspect(ctx, th)
		require.NoError(t, err)
		if s.Status != harness.StatusParked {
			break
		}
		for _, w := range s.Waits {
			if w.Tool == tools.MergeWorktree && w.Offer == nil {
				merges++
			}
			if w.Offer != nil {
				require.NoFileExists(t, root+"/shared.txt", "the workspace is untouched until the parent's merge")
			}
		}
		_, posted, err := drive.ApplyApproval(ctx, th, all, s.Waits)
		require.NoError(t, err)
		require.NotZero(t, posted)
		_, err = th.Resume(ctx)
		require.NoError(t, err)
	}
	v, err := th.View(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, v.Status)
	require.Equal(t, 2, merges, "each child's merge was a write a person approved")

	sys := decode[facts.SystemConfigured](t, readLog(t, rt.Store, "p")[1])
	require.NotNil(t, sys.Worktree)
	for _, c := range []struct{ id, want string }{{"p.2-d1", "1\ntwo\n3\n4\n5\n6\n"}, {"p.2-d2", "1\n2\n3\n4\nfive\n6\n"}} {
		log := readLog(t, rt.Store, c.id)
		spawn := decode[facts.ThreadSpawned](t, log[0])
		require.NotNil(t, spawn.Worktree, c.id)
		require.Equal(t, sys.Worktree.Root, spawn.Worktree.Workspace, "%s: its worktree is made of the parent's", c.id)
		read := completion(t, log, "1-r")
		require.Equal(t, facts.StatusSucceeded, read.Report.Status, "%s sees the parent's file: %s", c.id, read.Report.Error)
		require.Contains(t, read.Report.Stdout, "4\n5\n6", c.id)
		w := completion(t, log, "2-w")
		require.Len(t, w.Observation.Changed, 1, c.id)
		require.Equal(t, "shared.txt", w.Observation.Changed[0].Path)
		require.NotEmpty(t, w.Observation.Changed[0].Before, "%s changes the parent's file, not a file of its own", c.id)
		require.Nil(t, w.Observation.Others, "%s: nobody else works in its worktree", c.id)
		require.Equal(t, c.want, gitShow(t, root, "harness/"+c.id+":shared.txt"), "%s's branch has its own change only", c.id)
	}

	// Both merged into the parent's worktree, observed there; nothing lost.
	log := readLog(t, rt.Store, "p")
	for _, id := range []string{"3-m1", "3-m2"} {
		c := completion(t, log, id)
		require.Equal(t, facts.StatusSucceeded, c.Report.Status, "%s: %s", id, c.Report.Error)
		require.Equal(t, "shared.txt", c.Observation.Changed[0].Path)
	}
	both := "1\ntwo\n3\n4\nfive\n6\n"
	fin := decode[facts.WorktreeResult](t, lastOf(t, log, facts.KindWorktreeFinished))
	require.True(t, fin.Offered)
	require.Equal(t, both, gitShow(t, root, "harness/p:shared.txt"))
	require.Equal(t, both, read(t, root, "shared.txt"), "the parent's merge, approved, brings both into the workspace")
	require.NoError(t, audit.VerifyLog(ctx, rt.Store, st.Actor, "p"))
}
