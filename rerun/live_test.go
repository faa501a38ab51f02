package rerun_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/rerun"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/thread"
)

// scriptLive makes A's first two turns, then notes something else.
const scriptLive = `{"text": "Let me read.", "tool_calls": [{"id": "x1", "name": "read_file", "args": "{\"path\":\"notes.txt\"}"}]}
{"text": "Now set.", "tool_calls": [{"id": "x2", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"text": "Noting otherwise.", "tool_calls": [{"id": "x3", "name": "write_file", "args": "{\"path\":\"notes.txt\",\"content\":\"ttl noted\\n\"}"}]}
{"text": "Done."}`

// digestTree is the digest of every path under root and its content,
// the store left out.
func digestTree(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() && d.Name() == ".harness" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		h.Write([]byte(rel + "\x00"))
		if d.Type().IsRegular() {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			h.Write(b)
		}
		return nil
	}))
	return hex.EncodeToString(h.Sum(nil))
}

// A live rerun goes on past its divergence in a scratch copy of the
// workspace, the original's effects after the diverging turn began undone
// there; the person's workspace is not touched.
func TestRerunLive(t *testing.T) {
	e := harnesstest.NewStock(t, scriptA)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	before := digestTree(t, e.Root)

	scratch := t.TempDir()
	p := e.Stock.Place
	p.Root = scratch
	rt, actor, _, ran := rerunIn(t, p, e.Store, scriptLive)
	opts := rerun.Options{From: "t", Model: "scripted:b", Live: true, Source: e.Root, Skip: []string{e.Stock.Place.Store},
		Runtime: rt, Actor: actor}
	rep, err := rerun.Run(ctx, opts)
	require.NoError(t, err)
	require.Equal(t, 3, rep.DivergedAt)
	require.Equal(t, facts.DivergedArgs, rep.Divergence.Why)
	require.Contains(t, rep.Divergence.Detail, `content: "ttl is 300\n" → "ttl noted\n"`)
	// The diverged write asks a person, as any write does.
	require.Equal(t, harness.StatusParked, rep.Outcome)
	require.Equal(t, int64(0), ran.Load())
	// In the copy: the original's turn 3 undone, its turn 2 kept.
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(scratch, name))
		require.NoError(t, err)
		return string(b)
	}
	require.Equal(t, "line one\n", read("notes.txt"))
	require.Equal(t, "ttl_seconds = 300\n", read("cache.toml"))
	_, err = os.Stat(filepath.Join(scratch, ".harness"))
	require.ErrorIs(t, err, fs.ErrNotExist, "the store is not copied")

	th := rt.Thread(actor, rep.Rerun)
	st, err := drive.Inspect(ctx, th)
	require.NoError(t, err)
	all, err := drive.NewApproval("all", nil, nil)
	require.NoError(t, err)
	_, posted, err := drive.ApplyApproval(ctx, th, all, st.Waits)
	require.NoError(t, err)
	require.Equal(t, 1, posted)
	out, err := th.Resume(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Equal(t, int64(1), ran.Load(), "turn 3 ran, live")
	require.Equal(t, "ttl noted\n", read("notes.txt"))

	require.Equal(t, before, digestTree(t, e.Root), "the person's workspace is unchanged")
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, rep.Rerun))
	rep, err = rerun.Compare(ctx, e.Store, rep.Rerun, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"served", "served", "diverged", "live"}, verdicts(rep))
	require.Len(t, rep.Approvals, 2, "turn 2's, served, and turn 3's, asked")
}

// forgetful keeps no content: every kept blob is missing.
type forgetful struct{ action.Blobs }

func (forgetful) GetBlob(context.Context, string) ([]byte, error) { return nil, action.ErrNoBlob }

// A live rerun whose copy cannot be put back as the original's was is
// refused, clearly, and stops: a kept content missing, or the workspace
// changed since the original left it.
func TestRerunLiveRefused(t *testing.T) {
	for name, spoil := range map[string]func(e *harnesstest.Stock, rt *harness.Runtime){
		"blob missing": func(_ *harnesstest.Stock, rt *harness.Runtime) {
			rt.Services.Blobs = forgetful{rt.Services.Blobs}
		},
		"workspace changed": func(e *harnesstest.Stock, _ *harness.Runtime) {
			require.NoError(t, os.WriteFile(filepath.Join(e.Root, "notes.txt"), []byte("edited\n"), 0o644))
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := harnesstest.NewStock(t, scriptA)
			require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
			scratch := t.TempDir()
			p := e.Stock.Place
			p.Root = scratch
			rt, actor, _, ran := rerunIn(t, p, e.Store, scriptLive)
			spoil(e, rt)
			rep, err := rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Live: true, Source: e.Root,
				Skip: []string{e.Stock.Place.Store}, Runtime: rt, Actor: actor})
			require.ErrorIs(t, err, rerun.ErrLiveRefused)
			require.ErrorIs(t, err, rewind.ErrUndoRefused)
			require.Equal(t, harness.StatusStopped, rep.Outcome)
			require.Contains(t, rep.Divergence.Detail, "it does not go on live")
			t.Log(err)
			require.Equal(t, int64(0), ran.Load())
		})
	}
}

// A live rerun never acts in the workspace itself.
func TestRerunLiveNeverInTheWorkspace(t *testing.T) {
	e := harnesstest.NewStock(t, scriptA)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	rt, actor, _, _ := rerunOn(t, e, scriptLive)
	for _, scratch := range []string{e.Root, filepath.Join(e.Root, "sub")} {
		require.NoError(t, os.MkdirAll(scratch, 0o755))
		rt.Services.Workspace = scratch
		_, err := rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Live: true, Source: e.Root, Runtime: rt, Actor: actor})
		require.ErrorIs(t, err, rerun.ErrLiveRefused, scratch)
	}
	_, err := e.Store.Head(ctx, rerun.ID("t", rerun.Key("scripted:b", nil, true)))
	require.ErrorIs(t, err, thread.ErrNotFound, "nothing begun")
}
