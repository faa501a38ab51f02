package rerun_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/rerun"
)

// scriptLiveLonger diverges at turn 3 and writes twice more, live.
const scriptLiveLonger = `{"text": "Let me read.", "tool_calls": [{"id": "x1", "name": "read_file", "args": "{\"path\":\"notes.txt\"}"}]}
{"text": "Now set.", "tool_calls": [{"id": "x2", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"text": "Noting otherwise.", "tool_calls": [{"id": "x3", "name": "write_file", "args": "{\"path\":\"notes.txt\",\"content\":\"ttl noted\\n\"}"}]}
{"text": "And a log.", "tool_calls": [{"id": "x4", "name": "write_file", "args": "{\"path\":\"log.txt\",\"content\":\"done\\n\"}"}]}
{"text": "Done."}`

// A live rerun cut off midway goes on in the scratch copy it recorded
// when it is run again — refused in another, or when that copy is gone
// or changed since it last looked.
func TestRerunLiveGoesOnInItsScratch(t *testing.T) {
	e := harnesstest.NewStock(t, scriptA)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	live := func(scratch string, approve string) (*rerun.Report, error) {
		p := e.Stock.Place
		p.Root = scratch
		rt, actor, _, _ := rerunIn(t, p, e.Store, scriptLiveLonger)
		opts := rerun.Options{From: "t", Model: "scripted:b", Live: true, Source: e.Root, Skip: []string{e.Stock.Place.Store},
			Runtime: rt, Actor: actor}
		if approve != "" {
			a, err := drive.NewApproval(approve, nil, nil)
			require.NoError(t, err)
			opts.Approval = &a
		}
		return rerun.Run(ctx, opts)
	}
	read := func(dir, name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if os.IsNotExist(err) {
			return "(absent)"
		}
		require.NoError(t, err)
		return string(b)
	}

	scratch := t.TempDir()
	rep, err := live(scratch, "")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, rep.Outcome, "turn 3's write waits for a person")
	id := rep.Rerun
	dir, err := rerun.ScratchOf(ctx, e.Store, id)
	require.NoError(t, err)
	real, err := filepath.EvalSymlinks(scratch)
	require.NoError(t, err)
	require.Equal(t, real, dir, "the scratch copy is recorded")

	// Run again in another copy: refused, naming the recorded one.
	_, err = live(t.TempDir(), "writes")
	require.ErrorIs(t, err, rerun.ErrScratch)
	require.Contains(t, err.Error(), "goes on in "+real)

	// Run again in its own: it goes on there (turn 3 approved now, and
	// turn 4 run), the copy not made again.
	require.NoError(t, os.WriteFile(filepath.Join(scratch, "mine.txt"), []byte("kept\n"), 0o644))
	p := e.Stock.Place
	p.Root = scratch
	rt, actor, _, _ := rerunIn(t, p, e.Store, scriptLiveLonger)
	all, err := drive.NewApproval("writes", nil, nil)
	require.NoError(t, err)
	// Approve turn 3's write only, then stop, as if cut off.
	th := rt.Thread(actor, id)
	st, err := drive.Inspect(ctx, th)
	require.NoError(t, err)
	_, posted, err := drive.ApplyApproval(ctx, th, all, st.Waits)
	require.NoError(t, err)
	require.Equal(t, 1, posted)
	_, err = th.Resume(ctx)
	require.NoError(t, err)
	require.Equal(t, "ttl noted\n", read(scratch, "notes.txt"))

	// Changed since: refused.
	require.NoError(t, os.WriteFile(filepath.Join(scratch, "notes.txt"), []byte("meddled\n"), 0o644))
	_, err = live(scratch, "writes")
	require.ErrorIs(t, err, rerun.ErrScratch)
	require.Contains(t, err.Error(), "changed since")
	require.NoError(t, os.WriteFile(filepath.Join(scratch, "notes.txt"), []byte("ttl noted\n"), 0o644))

	rep, err = live(scratch, "writes")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, rep.Outcome)
	require.Equal(t, id, rep.Rerun)
	require.Equal(t, "done\n", read(scratch, "log.txt"))
	require.Equal(t, "kept\n", read(scratch, "mine.txt"), "the copy was not made again")
	require.Equal(t, "(absent)", read(e.Root, "log.txt"))
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, id))

	// Gone: refused, clearly.
	require.NoError(t, os.RemoveAll(scratch))
	_, err = rerun.ScratchOf(ctx, e.Store, id)
	require.ErrorIs(t, err, rerun.ErrScratch)
	require.Contains(t, err.Error(), "is gone")
}
