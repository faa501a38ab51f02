//go:build unix

package rerun_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/rerun"
)

// A live rerun goes on only in a scratch copy that is its user's alone:
// one others may write, or one another user made under the recorded
// name once the copy was gone (a shared /tmp is listed by everyone, and
// emptied at boot), would have the rerun's approved commands run on
// files someone else controls.
func TestRerunLiveScratchIsYoursAlone(t *testing.T) {
	e := harnesstest.NewStock(t, scriptA)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	live := func(scratch string) (*rerun.Report, error) {
		p := e.Stock.Place
		p.Root = scratch
		rt, actor, _, _ := rerunIn(t, p, e.Store, scriptLiveLonger)
		return rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Live: true, Source: e.Root,
			Skip: []string{e.Stock.Place.Store}, Runtime: rt, Actor: actor})
	}
	scratch := t.TempDir()
	rep, err := live(scratch)
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, rep.Outcome)
	id := rep.Rerun
	_, err = rerun.ScratchOf(ctx, e.Store, id)
	require.NoError(t, err)

	require.NoError(t, os.Chmod(scratch, 0o777))
	_, err = rerun.ScratchOf(ctx, e.Store, id)
	require.ErrorIs(t, err, rerun.ErrScratch)
	require.Contains(t, err.Error(), "writable by others")
	_, err = live(scratch)
	require.ErrorIs(t, err, rerun.ErrScratch, "nor does the rerun go on there")
	require.NoError(t, os.Chmod(scratch, 0o700))

	if os.Getuid() != 0 {
		t.Log("not root: the copy of another user is not made")
		return
	}
	// Gone, and made again under its name by another user.
	require.NoError(t, os.RemoveAll(scratch))
	require.NoError(t, os.Mkdir(scratch, 0o700))
	require.NoError(t, os.Chown(scratch, 65534, 65534))
	_, err = rerun.ScratchOf(ctx, e.Store, id)
	require.ErrorIs(t, err, rerun.ErrScratch)
	require.Contains(t, err.Error(), "not by you")
	_, err = live(scratch)
	require.ErrorIs(t, err, rerun.ErrScratch)
	require.NoError(t, os.Chown(scratch, 0, 0))
}
