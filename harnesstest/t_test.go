package harnesstest_test

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
)

// Run's T behaves as a test's: FailNow ends fn where it is called, the
// cleanups run last first after fn, TempDir's directories are removed,
// and every message, a bare FailNow and a panic come back as the error.
func TestRun(t *testing.T) {
	var order []string
	var dir string
	err := harnesstest.Run(func(rt harnesstest.T) {
		dir = rt.TempDir()
		rt.Cleanup(func() { order = append(order, "first") })
		rt.Cleanup(func() { order = append(order, "second"); rt.FailNow() })
		rt.Errorf("one %d", 1)
		rt.FailNow()
		order = append(order, "after FailNow")
	})
	require.EqualError(t, err, "one 1")
	require.Equal(t, []string{"second", "first"}, order)
	_, statErr := os.Stat(dir)
	require.True(t, errors.Is(statErr, os.ErrNotExist), "%v", statErr)

	require.ErrorIs(t, harnesstest.Run(func(rt harnesstest.T) { rt.FailNow() }), harnesstest.ErrFailNow)
	require.EqualError(t, harnesstest.Run(func(harnesstest.T) { panic("kaput") }), "panic: kaput")
	require.NoError(t, harnesstest.Run(func(rt harnesstest.T) { require.NoError(rt, nil) }))
	// A failed requirement is Errorf then FailNow.
	err = harnesstest.Run(func(rt harnesstest.T) {
		require.Equal(rt, 1, 2)
		order = append(order, "not reached")
	})
	require.ErrorContains(t, err, "Not equal")
	require.Len(t, order, 2)
}

// The script builder writes what a scripted model reads.
func TestScript(t *testing.T) {
	s := harnesstest.Script(
		harnesstest.Act("Writing.", harnesstest.Call("c", "write_file", `{"path":"a"}`)),
		harnesstest.Ask("Which file?", "a", "b"),
		harnesstest.Turn{Thread: "1-d1", Text: "child"},
		harnesstest.Say("Done."),
	)
	require.Equal(t, `{"text":"Writing.","tool_calls":[{"id":"c","name":"write_file","args":"{\"path\":\"a\"}"}]}
{"question":{"text":"Which file?","options":["a","b"]}}
{"thread":"1-d1","text":"child"}
{"text":"Done."}`, s)
	env := harnesstest.New(t, s)
	require.Equal(t, 0, env.Model.Calls())
}

// Workspace writes the files asked for, and refuses a name outside it.
func TestWorkspace(t *testing.T) {
	root := harnesstest.Workspace(t, map[string]string{"cache.toml": "ttl = 60\n", "a/b/c.txt": "deep"})
	b, err := os.ReadFile(root + "/a/b/c.txt")
	require.NoError(t, err)
	require.Equal(t, "deep", string(b))
	err = harnesstest.Run(func(rt harnesstest.T) { harnesstest.Workspace(rt, map[string]string{"../out": "x"}) })
	require.ErrorContains(t, err, "not a path inside the workspace")
}
