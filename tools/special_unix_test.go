//go:build unix

package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

// patience is how long a call that must not block is given: far more
// than any of them takes, far less than forever.
const patience = 10 * time.Second

// within runs f and fails the test if it has not returned after patience:
// it blocked (a FIFO's open waiting for a writer, a device read forever).
func within[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(patience):
		t.Fatalf("%s did not return within %s: it blocks", what, patience)
		panic("unreachable")
	}
}

// callWithin is call, failing the test if the call blocks.
func callWithin(t *testing.T, s *tools.Set, name, args string) facts.Report {
	t.Helper()
	tool, ok := s.Lookup(name)
	require.True(t, ok)
	type result struct {
		rep facts.Report
		err error
	}
	r := within(t, name+" "+args, func() result {
		rep, err := tool.Execute(context.Background(), action.Request{Adapter: name, Payload: json.RawMessage(args)})
		return result{rep, err}
	})
	require.NoError(t, r.err)
	require.NoError(t, r.rep.Status.Validate())
	return r.rep
}

// checkWithin runs a tool's Check, failing the test if it blocks.
func checkWithin(t *testing.T, s *tools.Set, name, args string) (*facts.CheckSpec, error) {
	t.Helper()
	tool, _ := s.Lookup(name)
	type result struct {
		spec *facts.CheckSpec
		err  error
	}
	r := within(t, name+" Check "+args, func() result {
		spec, err := tool.Check(json.RawMessage(args))
		return result{spec, err}
	})
	return r.spec, r.err
}

// decideWithin decides a check, failing the test if deciding blocks.
func decideWithin(t *testing.T, root string, spec facts.CheckSpec) facts.CheckRecorded {
	t.Helper()
	return within(t, "deciding "+spec.Name+" on "+spec.Target, func() facts.CheckRecorded {
		return action.Decide(context.Background(), "a1", spec, action.CheckEnv{Root: root})
	})
}

// The file tools refuse what is not a regular file — a FIFO, a character
// device, directly or through a symlink inside the workspace — with an
// error naming the path and what it is, and never block on one: opening
// a FIFO to read or write waits for the other end; reading a device such
// as /dev/zero never ends.
func TestSpecialFilesAreRefused(t *testing.T) {
	s, root := workspace(t, map[string]string{"a.txt": "a\n"})
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644))
	symlinks(t, root, map[string]string{"pipe-link": "pipe", "dir/pipe-up": "../pipe"})
	for _, tc := range []struct{ path, kind string }{
		{"pipe", "a named pipe (FIFO)"},
		{"pipe-link", "a named pipe (FIFO)"},
		{"dir/pipe-up", "a named pipe (FIFO)"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			want := `path "` + tc.path + `" is ` + tc.kind + `, not a regular file`
			for _, c := range []struct{ tool, args string }{
				{tools.ReadFile, js(t, map[string]string{"path": tc.path})},
				{tools.EditFile, js(t, map[string]string{"path": tc.path, "old": "a", "new": "b"})},
				{tools.WriteFile, js(t, map[string]string{"path": tc.path, "content": "x"})},
			} {
				rep := callWithin(t, s, c.tool, c.args)
				require.Equal(t, facts.StatusFailed, rep.Status, c.tool)
				require.Contains(t, rep.Error, c.tool+": "+want)
			}
			_, err := checkWithin(t, s, tools.EditFile, js(t, map[string]string{"path": tc.path, "old": "a", "new": "b"}))
			require.ErrorIs(t, err, action.ErrNotRegular)
			require.ErrorContains(t, err, want)
			// write_file's declared check names the path; decided on a
			// FIFO, it fails with the reason instead of waiting.
			spec, err := checkWithin(t, s, tools.WriteFile, js(t, map[string]string{"path": tc.path, "content": "x"}))
			require.NoError(t, err)
			rec := decideWithin(t, root, *spec)
			require.Equal(t, facts.VerdictFail, rec.Verdict)
			require.Contains(t, rec.Reason, tc.path+" is a named pipe (FIFO), not a regular file")
			fi, err := os.Lstat(filepath.Join(root, "pipe"))
			require.NoError(t, err)
			require.Equal(t, os.ModeNamedPipe, fi.Mode().Type(), "the FIFO is left as it was")
		})
	}
	// list_files lists a FIFO (it is an entry) and does not open it.
	rep := callWithin(t, s, tools.ListFiles, `{"pattern": "**"}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	require.Equal(t, "a.txt\ndir/pipe-up\npipe\npipe-link\n", rep.Stdout)
}

// A character device made in the workspace (a mknod copy of /dev/zero) is
// refused; before, write_file's declared check read it whole, growing
// without bound. A symlink to /dev/zero is refused as leading out of the
// workspace, whether its target is absolute or climbs out.
func TestCharDeviceIsRefused(t *testing.T) {
	t.Run("symlinks to /dev/zero", func(t *testing.T) {
		s, root := workspace(t, nil)
		up, err := filepath.Rel(root, "/dev/zero")
		require.NoError(t, err)
		symlinks(t, root, map[string]string{"abs-zero": "/dev/zero", "rel-zero": up})
		for _, p := range []string{"abs-zero", "rel-zero"} {
			for _, c := range []struct{ tool, args string }{
				{tools.ReadFile, js(t, map[string]string{"path": p})},
				{tools.EditFile, js(t, map[string]string{"path": p, "old": "a", "new": "b"})},
				{tools.WriteFile, js(t, map[string]string{"path": p, "content": "x"})},
			} {
				rep := callWithin(t, s, c.tool, c.args)
				require.Equal(t, facts.StatusFailed, rep.Status)
				require.Contains(t, rep.Error, `outside the workspace: path "`+p+`" leads outside the workspace through a symlink`)
			}
			rec := decideWithin(t, root, action.FileEquals(p, []byte("x")))
			require.Equal(t, facts.VerdictFail, rec.Verdict)
		}
	})
	t.Run("mknod", func(t *testing.T) {
		s, root := workspace(t, nil)
		mknodZero(t, filepath.Join(root, "zero"))
		symlinks(t, root, map[string]string{"zero-link": "zero"})
		for _, p := range []string{"zero", "zero-link"} {
			want := `path "` + p + `" is a character device, not a regular file`
			for _, c := range []struct{ tool, args string }{
				{tools.ReadFile, js(t, map[string]string{"path": p})},
				{tools.EditFile, js(t, map[string]string{"path": p, "old": "a", "new": "b"})},
				{tools.WriteFile, js(t, map[string]string{"path": p, "content": "x"})},
			} {
				rep := callWithin(t, s, c.tool, c.args)
				require.Equal(t, facts.StatusFailed, rep.Status, c.tool)
				require.Contains(t, rep.Error, want)
			}
			spec, err := checkWithin(t, s, tools.WriteFile, js(t, map[string]string{"path": p, "content": "x"}))
			require.NoError(t, err)
			rec := decideWithin(t, root, *spec)
			require.Equal(t, facts.VerdictFail, rec.Verdict)
			require.Contains(t, rec.Reason, p+" is a character device, not a regular file")
		}
	})
}
