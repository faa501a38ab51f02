package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

// TestNextRunSeesWhatChangedBetweenRuns: a file changed between two
// `harness run`s is seen by the second run's first observation — which
// starts from the stat cache and the manifest the first run left in the
// store, and is taken in the background while the process starts (the
// observer's Warm) — even when the change kept the file's size and put
// its mtime back (touch -d), on a file the first run had read long
// after it was written (its ctime still moves) and on one written just
// before the first run read it (racily clean: read again). A file added
// and one removed are seen too. Each run's first action.started names
// the hash a fresh walk of the tree gives, and so does its last
// observation.
func TestNextRunSeesWhatChangedBetweenRuns(t *testing.T) {
	dir := workspace(t, map[string]string{})
	put := func(rel, content string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	for i := range 40 {
		put(fmt.Sprintf("pkg%d/file%02d.txt", i%4, i), fmt.Sprintf("content of file %02d\n", i))
	}
	put("old.txt", "settled long ago\n")
	hourAgo := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "old.txt"), hourAgo, hourAgo))
	script := func(n int) string {
		name := fmt.Sprintf("s%d.jsonl", n)
		args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("notes/n%d.txt", n), "content": fmt.Sprintf("run %d\n", n)})
		call, _ := json.Marshal(map[string]any{"text": "note", "tool_calls": []map[string]string{{"id": "c1", "name": "write_file", "args": string(args)}}})
		// The script lives outside the tree: it is not what is observed.
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(p, append(call, []byte("\n{\"text\": \"done\"}\n")...), 0o644))
		return p
	}
	// fresh is the hash of a walk of the tree with nothing cached.
	fresh := func() string {
		// The store's own files are not observed; .harness/.gitignore is.
		w, err := action.NewWorkspace(dir, action.WithSkipPaths(".harness/db", ".harness/search"))
		require.NoError(t, err)
		defer w.Close()
		s, err := w.Observe(context.Background())
		require.NoError(t, err)
		return s.Hash
	}
	// run runs a session and returns the hash its first action.started
	// names and the last observation's.
	run := func(n int) (before, after string) {
		stdout, stderr, code := harnessIn(t, dir, "run", "--model", "scripted:"+script(n), "--approve", "all", "--no-input", "-o", "json", "Note it")
		require.Zero(t, code, stdout+stderr)
		stdout, stderr, code = harnessIn(t, dir, "log", "-o", "jsonl", fmt.Sprintf("t%d", n+1))
		require.Zero(t, code, stderr)
		for line := range strings.SplitSeq(strings.TrimSpace(stdout), "\n") {
			var f facts.Fact
			require.NoError(t, f.UnmarshalJSON([]byte(line)), line)
			switch f.Kind {
			case facts.KindActionStarted:
				s, err := facts.Decode[facts.ActionStarted](f)
				require.NoError(t, err)
				if before == "" {
					before = s.ObservedBefore
				}
			case facts.KindActionCompleted:
				c, err := facts.Decode[facts.ActionCompleted](f)
				require.NoError(t, err)
				after = c.Observation.After
			}
		}
		require.NotEmpty(t, before, stdout)
		return before, after
	}

	// The tree is older than the racy window when the first run reads
	// it, as a tree in use mostly is: what it reads is remembered as
	// clean (not merely re-read each time).
	time.Sleep(action.DefaultRacyWindow + 100*time.Millisecond)
	// The first run makes the store (and .harness/.gitignore, observed).
	_, after := run(0)
	require.Equal(t, fresh(), after)
	// racy.txt is written just before the next run reads it.
	put("racy.txt", "written just now\n")
	want := fresh()
	before, after := run(1)
	require.Equal(t, want, before)
	require.Equal(t, fresh(), after)

	sameSize := func(rel, content string) {
		p := filepath.Join(dir, rel)
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Len(t, content, int(st.Size()))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		require.NoError(t, os.Chtimes(p, st.ModTime(), st.ModTime())) // touch -d
	}
	sameSize("old.txt", "SETTLED LONG AGO\n")
	sameSize("racy.txt", "WRITTEN JUST NOW\n")
	put("pkg1/added.txt", "added between runs\n")
	require.NoError(t, os.Remove(filepath.Join(dir, "pkg2/file02.txt")))
	want = fresh()
	before, after = run(2)
	require.Equal(t, want, before, "the second run's first look saw every change")
	require.Equal(t, fresh(), after)

	// Nothing changed between runs: the same.
	want = fresh()
	before, after = run(3)
	require.Equal(t, want, before)
	require.Equal(t, fresh(), after)
}
