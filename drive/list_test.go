package drive_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// List reads every thread of a store from its view, with its place in
// its tree, and keeps those its filters keep; pages go on where the last
// one ended.
func TestList(t *testing.T) {
	e := harnesstest.NewDelegating(t, harnesstest.DelegateScript)
	_, err := e.Thread("p").Start(ctx, "Delegate it")
	require.NoError(t, err)
	_, err = e.Thread("q").Start(ctx, "Delegate it too")
	require.NoError(t, err)

	all, next, err := drive.List(ctx, e.RT, e.Actor, drive.ListOptions{})
	require.NoError(t, err)
	require.Empty(t, next)
	ids := func(sts []drive.State) []string {
		var out []string
		for _, st := range sts {
			out = append(out, st.Thread)
		}
		return out
	}
	require.Equal(t, []string{"p", "p.1-d1", "q", "q.1-d1"}, ids(all))
	kid := all[1]
	require.Equal(t, "p", kid.Parent)
	require.Equal(t, "p", kid.Root)
	require.Equal(t, "Set the TTL to 300", kid.Title, "a child's title is its task")
	require.Equal(t, harness.StatusParked, kid.Status)
	require.Equal(t, "p", all[0].Root)
	require.Empty(t, all[0].Parent)
	require.Equal(t, "Delegate it", all[0].Title)

	tree, _, err := drive.List(ctx, e.RT, e.Actor, drive.ListOptions{Root: "q"})
	require.NoError(t, err)
	require.Equal(t, []string{"q", "q.1-d1"}, ids(tree))

	page, next, err := drive.List(ctx, e.RT, e.Actor, drive.ListOptions{Limit: 3})
	require.NoError(t, err)
	require.Equal(t, []string{"p", "p.1-d1", "q"}, ids(page))
	rest, next, err := drive.List(ctx, e.RT, e.Actor, drive.ListOptions{After: next, Limit: 3})
	require.NoError(t, err)
	require.Equal(t, []string{"q.1-d1"}, ids(rest))
	require.Empty(t, next)

	done, _, err := drive.List(ctx, e.RT, e.Actor, drive.ListOptions{Status: harness.StatusDone})
	require.NoError(t, err)
	require.Empty(t, done)
	ws, _, err := drive.List(ctx, e.RT, e.Actor, drive.ListOptions{Workspace: "elsewhere:/x", Default: "here:/y"})
	require.NoError(t, err)
	require.Empty(t, ws)
	_, _, err = drive.List(ctx, e.RT, e.Actor, drive.ListOptions{Limit: -1})
	require.Error(t, err)

	ordered, depth := drive.InTreeOrder([]drive.State{all[3], all[2], all[1], all[0]})
	require.Equal(t, []string{"q", "q.1-d1", "p", "p.1-d1"}, ids(ordered))
	require.Equal(t, []int{0, 1, 0, 1}, depth)
}

// Spawn records that name each other (a store written by hand) leave a
// thread with no root: it is still listed, and in a tree order of its
// own, not lost.
func TestListSpawnCycle(t *testing.T) {
	e := harnesstest.NewDelegating(t, harnesstest.DelegateScript)
	for id, parent := range map[string]string{"x": "y", "y": "x"} {
		d, err := facts.NewDraft(facts.KindThreadSpawned, facts.IngressCause(facts.SpawnKey), facts.ThreadSpawned{Parent: parent, Seq: 1, Hash: "00", Key: "k"})
		require.NoError(t, err)
		_, err = e.Store.Append(ctx, id, 0, d)
		require.NoError(t, err)
	}
	sts := []drive.State{{Thread: "x", Parent: "y"}, {Thread: "y", Parent: "x"}}
	ordered, depth := drive.InTreeOrder(sts)
	require.Len(t, ordered, 2)
	require.Equal(t, []int{0, 1}, depth)

	st, err := drive.Inspect(ctx, e.Thread("x"))
	require.NoError(t, err)
	require.Equal(t, "y", st.Parent)
	require.Empty(t, st.Root, "no root up spawn records that name each other")
}
