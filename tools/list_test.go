package tools_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/tools"
)

func TestListFiles(t *testing.T) {
	s, root := workspace(t, map[string]string{
		"go.mod":                 "module x\n",
		"main.go":                "package main\n",
		"README.md":              "# x\n",
		"cmd/x/main.go":          "package main\n",
		"cmd/x/main_test.go":     "package main\n",
		"internal/a/a.go":        "package a\n",
		"internal/a/b/b.go":      "package b\n",
		"internal/a/b/notes.md":  "\n",
		".hidden/x.go":           "package hidden\n",
		".git/HEAD":              "ref: refs/heads/main\n",
		".git/objects/ab/cd.go":  "not go\n",
		".harness/000001.log":    "log\n",
		"docs/.harness/notes.md": "ordinary content\n",
		"vendor/.git":            "gitdir: ../.git/modules/vendor\n", // a submodule's .git file
		"vendor/v.go":            "package v\n",
	})
	for _, tc := range []struct {
		pattern string
		want    []string
	}{
		{"**/*.go", []string{".hidden/x.go", "cmd/x/main.go", "cmd/x/main_test.go", "internal/a/a.go", "internal/a/b/b.go", "main.go", "vendor/v.go"}},
		{"*.go", []string{"main.go"}},
		{"*", []string{"README.md", "go.mod", "main.go"}},
		{"cmd/**", []string{"cmd/x/main.go", "cmd/x/main_test.go"}},
		{"internal/**/b.go", []string{"internal/a/b/b.go"}},
		{"internal/*/*.go", []string{"internal/a/a.go"}},
		{"**/.harness/*", nil}, // a .harness at any depth is a store: read_file refuses it, commands do not see it
		{"**/b/*", []string{"internal/a/b/b.go", "internal/a/b/notes.md"}},
		{"**/*_test.go", []string{"cmd/x/main_test.go"}},
		{"cmd/x/main.go", []string{"cmd/x/main.go"}},
		{"./cmd//x/../x/main.go", nil}, // ".." is refused below; see TestListFilesConfinement
		{"**/*.[mg][do]*", []string{".hidden/x.go", "README.md", "cmd/x/main.go", "cmd/x/main_test.go", "go.mod", "internal/a/a.go", "internal/a/b/b.go", "internal/a/b/notes.md", "main.go", "vendor/v.go"}},
		{"**/**/a.go", []string{"internal/a/a.go"}},
		{"**/*.rs", nil},
		{"nope/**", nil},
		{root + "/cmd/**", []string{"cmd/x/main.go", "cmd/x/main_test.go"}},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			rep := call(t, s, tools.ListFiles, js(t, map[string]string{"pattern": tc.pattern}))
			if strings.Contains(tc.pattern, "..") {
				require.Equal(t, facts.StatusFailed, rep.Status)
				return
			}
			require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
			want := ""
			if len(tc.want) > 0 {
				want = strings.Join(tc.want, "\n") + "\n"
			}
			require.Equal(t, want, rep.Stdout)
			switch len(tc.want) {
			case 1:
				require.Equal(t, fmt.Sprintf("1 file matches %q", tc.pattern), rep.Transcript)
			default:
				require.Equal(t, fmt.Sprintf("%d files match %q", len(tc.want), tc.pattern), rep.Transcript)
			}
		})
	}

	// No pattern is every file.
	all := call(t, s, tools.ListFiles, `{}`)
	every := call(t, s, tools.ListFiles, `{"pattern": "**"}`)
	require.Equal(t, every.Stdout, all.Stdout)
	require.NotContains(t, all.Stdout, ".git")
	require.NotContains(t, all.Stdout, "\n.harness/")
}

func TestListFilesCap(t *testing.T) {
	files := map[string]string{}
	for i := range 25 {
		files[fmt.Sprintf("f%02d.txt", i)] = ""
	}
	s, _ := workspace(t, files, tools.WithLimits(tools.Limits{ListEntries: 10}))
	rep := call(t, s, tools.ListFiles, `{"pattern": "*.txt"}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	require.Equal(t, 10, strings.Count(rep.Stdout, "\n"))
	require.True(t, strings.HasPrefix(rep.Stdout, "f00.txt\nf01.txt\n"))
	require.Equal(t, `25 files match "*.txt"; the first 10 are listed, 15 were cut: narrow the pattern`, rep.Transcript)
}

// list_files lists no name in what read_file refuses: the store, through
// a link to it or under another name, a nested store, and a directory
// swapped for a link to the store while the listing runs. It listed the
// store's file names through a link before (rev-sbx13b).
func TestListFilesLeavesOutTheStore(t *testing.T) {
	s, root := workspace(t, map[string]string{
		".harness/config.json":     "{}",
		"sub/.harness/config.json": "nested",
		"mystore/db/CURRENT":       "MANIFEST-1",
		"src/main.go":              "package main\n",
		"d/x/a.txt":                "a",
	})
	spec, err := sandbox.Default(root, filepath.Join(root, "mystore"))
	require.NoError(t, err)
	s, err = tools.New(root, tools.WithSandbox(spec))
	require.NoError(t, err)
	require.NoError(t, os.Symlink(".harness", filepath.Join(root, "h")))
	require.NoError(t, os.Symlink("mystore", filepath.Join(root, "st")))
	require.NoError(t, os.Symlink("../sub/.harness", filepath.Join(root, "src", "n")))

	rep := call(t, s, tools.ListFiles, `{"pattern": "**"}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	require.Equal(t, "d/x/a.txt\nh\nsrc/main.go\nsrc/n\nst\n", rep.Stdout)
	for _, p := range []string{"h/*", "h/**", "st/**", "st/db/*", "src/n/*", "sub/.harness/*", "mystore/**", ".HARNESS/*"} {
		t.Run(p, func(t *testing.T) {
			rep := call(t, s, tools.ListFiles, js(t, map[string]string{"pattern": p}))
			require.NotContains(t, rep.Stdout, "config.json", p)
			require.NotContains(t, rep.Stdout, "CURRENT", p)
		})
	}
	rep = call(t, s, tools.ListFiles, `{"pattern": "h/*"}`)
	require.Equal(t, facts.StatusFailed, rep.Status, rep.Stdout)
	require.Contains(t, rep.Error, "neither the model's tools nor its commands read it")

	// A command swaps d/x for a link to the store, over and over, while
	// the model lists d: a listing gives d/x's own files or none of it.
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		x, moved := filepath.Join(root, "d", "x"), filepath.Join(root, "d", "x.away")
		for !stop.Load() {
			if os.Rename(x, moved) == nil {
				_ = os.Symlink("../.harness", x)
				_ = os.Remove(x)
				_ = os.Rename(moved, x)
			}
		}
	}()
	for range 2000 {
		rep := call(t, s, tools.ListFiles, `{"pattern": "d/**"}`)
		if rep.Status == facts.StatusSucceeded {
			require.NotContains(t, rep.Stdout, "config.json")
		}
	}
	stop.Store(true)
	<-done
}
