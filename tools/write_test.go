package tools_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestWriteFile(t *testing.T) {
	for _, tc := range []struct {
		name       string
		path       string
		content    string
		file       string // where the content lands
		transcript string
		err        string
	}{
		{name: "create", path: "new.txt", content: "hello\n", file: "new.txt", transcript: "created new.txt with 6 bytes"},
		{name: "create with parents", path: "a/b/c.txt", content: "deep", file: "a/b/c.txt", transcript: "created a/b/c.txt with 4 bytes"},
		{name: "replace", path: "old.txt", content: "new\n", file: "old.txt", transcript: "replaced old.txt (12 bytes) with 4 bytes"},
		{name: "empty content", path: "old.txt", content: "", file: "old.txt", transcript: "replaced old.txt (12 bytes) with 0 bytes"},
		{name: "through an inside symlink", path: "link.txt", content: "via link", file: "old.txt", transcript: "replaced link.txt (12 bytes) with 8 bytes"},
		{name: "a directory", path: "dir", content: "x", err: `write_file: path "dir" is a directory`},
		{name: "under a file", path: "old.txt/x", content: "x", err: `write_file: path "old.txt/x": `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, root := workspace(t, map[string]string{"old.txt": "old content\n", "dir/x": ""})
			require.NoError(t, os.Symlink("old.txt", filepath.Join(root, "link.txt")))
			rep := call(t, s, tools.WriteFile, js(t, map[string]string{"path": tc.path, "content": tc.content}))
			if tc.err != "" {
				require.Equal(t, facts.StatusFailed, rep.Status)
				require.Contains(t, rep.Error, tc.err)
				require.Equal(t, "old content\n", readFile(t, root, "old.txt"))
				return
			}
			require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
			require.Equal(t, tc.content, readFile(t, root, tc.file))
			require.Equal(t, tc.transcript, rep.Transcript)
			require.Equal(t, digest(tc.content), rep.ClaimedState)
			if tc.name == "through an inside symlink" {
				fi, err := os.Lstat(filepath.Join(root, "link.txt"))
				require.NoError(t, err)
				require.NotZero(t, fi.Mode()&os.ModeSymlink, "the link is still a link")
			}
			leftovers, err := filepath.Glob(filepath.Join(root, "*tmp*"))
			require.NoError(t, err)
			require.Empty(t, leftovers, "no temporary file is left behind")
		})
	}
}

func TestWriteFileKeepsMode(t *testing.T) {
	s, root := workspace(t, map[string]string{"run.sh": "#!/bin/sh\n"})
	require.NoError(t, os.Chmod(filepath.Join(root, "run.sh"), 0o750))
	rep := call(t, s, tools.WriteFile, `{"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	fi, err := os.Stat(filepath.Join(root, "run.sh"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o750), fi.Mode().Perm())
}

func TestEditFile(t *testing.T) {
	const file = "[cache]\nttl_seconds = 60\nsize = 10\n# size = 10 is the default\n"
	for _, tc := range []struct {
		name, old, new string
		want           string // the file after
		transcript     string
		err            error
		errText        string
	}{
		{name: "one line", old: "ttl_seconds = 60", new: "ttl_seconds = 300",
			want:       "[cache]\nttl_seconds = 300\nsize = 10\n# size = 10 is the default\n",
			transcript: "edited cache.toml at line 2: replaced 1 line with 1 line (62 → 63 bytes)"},
		{name: "across lines", old: "ttl_seconds = 60\nsize = 10\n", new: "",
			want:       "[cache]\n# size = 10 is the default\n",
			transcript: "edited cache.toml at line 2: replaced 3 lines with 1 line (62 → 35 bytes)"},
		{name: "unique with context", old: "\nsize = 10", new: "\nsize = 20",
			want:       "[cache]\nttl_seconds = 60\nsize = 20\n# size = 10 is the default\n",
			transcript: "edited cache.toml at line 2: replaced 2 lines with 2 lines (62 → 62 bytes)"},
		{name: "missing", old: "ttl_seconds = 61", new: "x", err: tools.ErrNoMatch,
			errText: "edit_file: old text not found in cache.toml: it occurs 0 times"},
		{name: "ambiguous", old: "size = 10", new: "size = 20", err: tools.ErrAmbiguousMatch,
			errText: "edit_file: old text is not unique in cache.toml: it occurs 2 times (at lines 3, 4); include more of the surrounding text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, root := workspace(t, map[string]string{"cache.toml": file})
			args := js(t, map[string]string{"path": "cache.toml", "old": tc.old, "new": tc.new})
			rep := call(t, s, tools.EditFile, args)
			if tc.err != nil {
				require.Equal(t, facts.StatusFailed, rep.Status)
				require.Contains(t, rep.Error, tc.errText)
				require.Equal(t, file, readFile(t, root, "cache.toml"), "a refused edit changes nothing")
				return
			}
			require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
			require.Equal(t, tc.want, readFile(t, root, "cache.toml"))
			require.Equal(t, tc.transcript, rep.Transcript)
			require.Equal(t, digest(tc.want), rep.ClaimedState)
		})
	}
}

func TestEditFileMatching(t *testing.T) {
	for _, tc := range []struct {
		name, file, old string
		errText         string
	}{
		{"overlapping occurrences", "aaa", "aa", "it occurs 2 times (at lines 1, 1)"},
		{"many occurrences", "x\nx\nx\nx\nx\nx\nx\nx\nx\nx\nx\nx\n", "x", "it occurs 12 times (at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …)"},
		{"CRLF", "a\r\nb\r\n", "a\nb", "it occurs 0 times (the file has CRLF line endings; old has LF)"},
		{"missing file", "", "x", `edit_file: path "f.txt": file does not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"f.txt": tc.file}
			if tc.name == "missing file" {
				files = nil
			}
			s, _ := workspace(t, files)
			rep := call(t, s, tools.EditFile, js(t, map[string]string{"path": "f.txt", "old": tc.old, "new": "y"}))
			require.Equal(t, facts.StatusFailed, rep.Status)
			require.Contains(t, rep.Error, tc.errText)
		})
	}
}

// edit_file reads a whole file, so it edits files up to Limits.FileBytes
// and refuses larger ones without reading them.
func TestEditFileBounded(t *testing.T) {
	s, root := workspace(t, map[string]string{"big.txt": strings.Repeat("x", 200) + "\nend\n", "small.txt": "end\n"},
		tools.WithLimits(tools.Limits{FileBytes: 100}))
	args := `{"path": "big.txt", "old": "end", "new": "END"}`
	rep := call(t, s, tools.EditFile, args)
	require.Equal(t, facts.StatusFailed, rep.Status)
	require.Contains(t, rep.Error, `edit_file: path "big.txt" is 205 bytes, more than the 100 a file tool reads whole`)
	tool, _ := s.Lookup(tools.EditFile)
	_, err := tool.Check([]byte(args))
	require.ErrorContains(t, err, `is 205 bytes, more than the 100`)
	rep = call(t, s, tools.EditFile, `{"path": "small.txt", "old": "end", "new": "END"}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	require.Equal(t, "END\n", readFile(t, root, "small.txt"))
}
