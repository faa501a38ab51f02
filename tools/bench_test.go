package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

// BenchmarkWriteFile measures write_file of a file three directories deep
// (the walk, the protection check, the atomic replace) against the raw
// baseline in the same run: an os.Root write of a temporary file, synced,
// renamed over the target. In a plain directory, and in a git repository
// whose config includes another and names a hooks directory (the git
// configs read, the git directories on the way looked for).
func BenchmarkWriteFile(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchWriteFile(b, false) })
	b.Run("repo", func(b *testing.B) { benchWriteFile(b, true) })
}

func benchWriteFile(b *testing.B, repo bool) {
	root := b.TempDir()
	require.NoError(b, os.MkdirAll(filepath.Join(root, "a", "b", "c"), 0o755))
	if repo {
		out, err := exec.Command("git", "init", "-q", root).CombinedOutput()
		require.NoError(b, err, "%s", out)
		for _, kv := range [][]string{{"core.hooksPath", ".husky/_"}, {"include.path", "../tools/git.cfg"}} {
			out, err := exec.Command("git", "-C", root, "config", kv[0], kv[1]).CombinedOutput()
			require.NoError(b, err, "%s", out)
		}
		require.NoError(b, os.MkdirAll(filepath.Join(root, "tools"), 0o755))
		require.NoError(b, os.WriteFile(filepath.Join(root, "tools/git.cfg"), []byte("[alias]\n\tst = status\n"), 0o644))
	}
	s, err := tools.New(root)
	require.NoError(b, err)
	tool, _ := s.Lookup(tools.WriteFile)
	args := json.RawMessage(`{"path": "a/b/c/file.txt", "content": "hello, world\n"}`)
	data := []byte("hello, world\n")

	raw := func() {
		r, err := os.OpenRoot(root)
		require.NoError(b, err)
		defer r.Close()
		f, err := r.OpenFile("a/b/c/.raw.tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		require.NoError(b, err)
		_, err = f.Write(data)
		require.NoError(b, err)
		require.NoError(b, f.Sync())
		require.NoError(b, f.Close())
		require.NoError(b, r.Rename("a/b/c/.raw.tmp", "a/b/c/raw.txt"))
	}
	viaTool := func() {
		rep, err := tool.Execute(context.Background(), action.Request{Payload: args})
		require.NoError(b, err)
		require.Equal(b, facts.StatusSucceeded, rep.Status, rep.Error)
	}
	var rawTime, toolTime time.Duration
	for b.Loop() {
		t0 := time.Now()
		raw()
		t1 := time.Now()
		viaTool()
		rawTime += t1.Sub(t0)
		toolTime += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(toolTime.Microseconds())/n, "µs/write")
	b.ReportMetric(float64(rawTime.Microseconds())/n, "µs/raw")
	b.ReportMetric(float64(toolTime)/float64(max(rawTime, 1)), "ratio")
}

// BenchmarkPrecheck measures Set.Precheck of a write_file call against
// decoding the same arguments with encoding/json, the raw baseline.
func BenchmarkPrecheck(b *testing.B) {
	root := b.TempDir()
	require.NoError(b, os.MkdirAll(filepath.Join(root, "a", "b"), 0o755))
	s, err := tools.New(root)
	require.NoError(b, err)
	args := []byte(`{"path": "a/b/file.txt", "content": "hello, world\n"}`)
	var rawTime, preTime time.Duration
	for b.Loop() {
		t0 := time.Now()
		var v map[string]any
		require.NoError(b, json.Unmarshal(args, &v))
		t1 := time.Now()
		require.NoError(b, s.Precheck(tools.WriteFile, args))
		rawTime += t1.Sub(t0)
		preTime += time.Since(t1)
	}
	b.ReportMetric(float64(preTime.Microseconds())/float64(b.N), "µs/precheck")
	b.ReportMetric(float64(preTime)/float64(max(rawTime, 1)), "ratio")
}
