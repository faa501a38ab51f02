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

func TestReadFile(t *testing.T) {
	var long strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&long, "line %03d\n", i) // 9 bytes a line
	}
	s, _ := workspace(t, map[string]string{
		"a.txt":        "one\ntwo\nthree\n",
		"no-eol.txt":   "one\ntwo",
		"empty.txt":    "",
		"long.txt":     long.String(),
		"wide.txt":     strings.Repeat("é", 20) + "\nnext\n", // 40 bytes, then a short line
		"bin.dat":      "PK\x03\x04\x00\x00binary",
		"dir/file.txt": "x\n",
	}, tools.WithLimits(tools.Limits{ReadBytes: 100}))
	for _, tc := range []struct {
		name, args string
		stdout     string
		transcript string
		err        string
	}{
		{name: "whole file", args: `{"path": "a.txt"}`, stdout: "one\ntwo\nthree\n", transcript: "a.txt: lines 1-3 of 3"},
		{name: "last line without newline", args: `{"path": "no-eol.txt"}`, stdout: "one\ntwo", transcript: "no-eol.txt: lines 1-2 of 2"},
		{name: "offset", args: `{"path": "a.txt", "offset": 2}`, stdout: "two\nthree\n", transcript: "a.txt: lines 2-3 of 3"},
		{name: "offset and limit", args: `{"path": "a.txt", "offset": 2, "limit": 1}`, stdout: "two\n", transcript: "a.txt: lines 2-2 of 3; continue with offset=3"},
		{name: "limit past the end", args: `{"path": "a.txt", "limit": 10}`, stdout: "one\ntwo\nthree\n", transcript: "a.txt: lines 1-3 of 3"},
		{name: "empty", args: `{"path": "empty.txt"}`, transcript: "empty.txt: empty file"},
		{name: "byte cap ends at a whole line", args: `{"path": "long.txt"}`, stdout: long.String()[:99],
			transcript: "long.txt: lines 1-11 of 100; 100-byte cap reached, continue with offset=12"},
		{name: "smaller cap", args: `{"path": "long.txt", "offset": 50, "max_bytes": 20}`, stdout: "line 050\nline 051\n",
			transcript: "long.txt: lines 50-51 of 100; 20-byte cap reached, continue with offset=52"},
		{name: "one line longer than the cap is cut on a rune", args: `{"path": "wide.txt", "max_bytes": 15}`, stdout: strings.Repeat("é", 7),
			transcript: "wide.txt: lines 1-1 of 2; line 1 is longer than 15 bytes and was cut there"},
		{name: "nested path", args: `{"path": "dir/file.txt"}`, stdout: "x\n", transcript: "dir/file.txt: lines 1-1 of 1"},
		{name: "missing", args: `{"path": "nope.txt"}`, err: `read_file: path "nope.txt": file does not exist`},
		{name: "directory", args: `{"path": "dir"}`, err: `read_file: path "dir" is a directory; list_files lists it`},
		{name: "workspace itself", args: `{"path": "."}`, err: `read_file: path "." is a directory`},
		{name: "binary", args: `{"path": "bin.dat"}`, err: `read_file: path "bin.dat" looks binary`},
		{name: "offset past the end", args: `{"path": "a.txt", "offset": 4}`, err: `offset 4 is past the end of "a.txt", which has 3 lines`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := call(t, s, tools.ReadFile, tc.args)
			if tc.err != "" {
				require.Equal(t, facts.StatusFailed, rep.Status)
				require.Contains(t, rep.Error, tc.err)
				return
			}
			require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
			require.Equal(t, tc.stdout, rep.Stdout)
			require.Equal(t, tc.transcript, rep.Transcript)
			require.Empty(t, rep.ClaimedState, "reading claims nothing")
		})
	}
}

// A file larger than read_file's chunk is counted to its end and paged.
func TestReadFileLarge(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 50_000; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	s, _ := workspace(t, map[string]string{"big.txt": b.String()})
	rep := call(t, s, tools.ReadFile, `{"path": "big.txt", "offset": 49999}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	require.Equal(t, "49999\n50000\n", rep.Stdout)
	require.Equal(t, "big.txt: lines 49999-50000 of 50000", rep.Transcript)
}

// read_file reads at most Limits.FileBytes of a file: a larger one is
// counted that far, and the summary says so.
func TestReadFileBounded(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&b, "line %03d\n", i) // 9 bytes a line: 2700 bytes
	}
	s, _ := workspace(t, map[string]string{"big.txt": b.String()}, tools.WithLimits(tools.Limits{FileBytes: 1000, ReadBytes: 90}))
	rep := call(t, s, tools.ReadFile, `{"path": "big.txt", "offset": 100, "limit": 2}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	require.Equal(t, "line 100\nline 101\n", rep.Stdout)
	require.Equal(t, "big.txt: lines 100-101 of at least 112 (only the first 1000 of its 2700 bytes were read); continue with offset=102", rep.Transcript)
	rep = call(t, s, tools.ReadFile, `{"path": "big.txt", "offset": 200}`)
	require.Equal(t, facts.StatusFailed, rep.Status)
	require.Contains(t, rep.Error, `offset 200 is past the 112 lines in the first 1000 bytes of "big.txt", which is all read_file reads of a file`)
}

// read_file does not read what no command may see: the store (.harness at
// any depth, however the path is spelled or linked, and a store kept under
// another name that the sandbox hides), where serve tokens and settings
// live. Found by the rev-trust13 attack: the model read
// .harness/config.json unasked, with the serve token a person had put
// there. Beside it, files read as before.
func TestReadFileRefusesTheStore(t *testing.T) {
	s, root := workspace(t, map[string]string{
		".harness/config.json":     `{"serve": {"tokens": [{"name": "bob", "token": "secret"}]}}`,
		"sub/.harness/config.json": "nested",
		"mystore/db/CURRENT":       "MANIFEST-1",
		"src/main.go":              "package main\n",
	})
	spec, err := sandbox.Default(root, filepath.Join(root, "mystore"))
	require.NoError(t, err)
	s, err = tools.New(root, tools.WithSandbox(spec))
	require.NoError(t, err)
	require.NoError(t, os.Symlink(".harness", filepath.Join(root, "h")))
	require.NoError(t, os.Symlink("../.harness/config.json", filepath.Join(root, "src", "cfg")))
	require.NoError(t, os.Symlink("mystore", filepath.Join(root, "st")))
	for _, p := range []string{
		".harness/config.json", "./.harness/./config.json", "sub/../.harness/config.json",
		filepath.Join(root, ".harness", "config.json"), "h/config.json", "src/cfg",
		"sub/.harness/config.json", ".HARNESS/config.json", "mystore/db/CURRENT", "st/db/CURRENT",
	} {
		t.Run(p, func(t *testing.T) {
			rep := call(t, s, tools.ReadFile, js(t, map[string]string{"path": p}))
			require.Equal(t, facts.StatusFailed, rep.Status, "read %s: %s", p, rep.Stdout)
			require.Contains(t, rep.Error, "neither the model's tools nor its commands read it")
			require.NotContains(t, rep.Stdout, "secret")
			require.ErrorIs(t, s.Precheck(tools.ReadFile, []byte(js(t, map[string]string{"path": p}))), tools.ErrProtected)
		})
	}
	rep := call(t, s, tools.ReadFile, `{"path": "src/main.go"}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	require.Equal(t, "package main\n", rep.Stdout)
}

// A file swapped, over and over, for a link to the store while read_file
// reads it (a command can make the link): every read gives the file or
// fails, never the store's bytes. rev-sbx13b saw the serve token within
// a few hundred tries before read_file checked that what it opened is
// what its check found.
func TestReadFileSwappedForALinkToTheStore(t *testing.T) {
	_, root := workspace(t, map[string]string{
		".harness/config.json": `{"serve": {"tokens": [{"name": "bob", "token": "secret"}]}}`,
		"x":                    "plain\n",
	})
	spec, err := sandbox.Default(root, "")
	require.NoError(t, err)
	s, err := tools.New(root, tools.WithSandbox(spec))
	require.NoError(t, err)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; !stop.Load(); i++ {
			tmp := filepath.Join(root, "x.tmp")
			_ = os.Remove(tmp)
			if i%2 == 0 {
				_ = os.Symlink(".harness/config.json", tmp)
			} else {
				_ = os.WriteFile(tmp, []byte("plain\n"), 0o644)
			}
			_ = os.Rename(tmp, filepath.Join(root, "x"))
		}
	}()
	defer func() { stop.Store(true); <-done }()
	plain := 0
	for range 2000 {
		rep := call(t, s, tools.ReadFile, `{"path": "x"}`)
		require.NotContains(t, rep.Stdout, "secret")
		if rep.Stdout == "plain\n" {
			plain++
		}
	}
	require.NotZero(t, plain, "no read got the plain file")
}
