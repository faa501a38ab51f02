package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestNATSScripts runs the scripts in testdata/nats against a real NATS
// server with JetStream, embedded in the test, one for each script:
// HARNESS_STORE names it, as a user whose threads outgrew one machine
// would.
func TestNATSScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/nats",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			dir, err := os.MkdirTemp("", "harness-nats-")
			if err != nil {
				return err
			}
			env.Defer(func() { _ = os.RemoveAll(dir) })
			srv, err := server.NewServer(&server.Options{
				ServerName: "harness-cli-test",
				Host:       "127.0.0.1",
				Port:       -1,
				JetStream:  true,
				StoreDir:   dir, // outside the workspace, which the runs observe
				NoLog:      true,
				NoSigs:     true,
			})
			if err != nil {
				return err
			}
			srv.Start()
			env.Defer(func() {
				srv.Shutdown()
				srv.WaitForShutdown()
			})
			if !srv.ReadyForConnections(10 * time.Second) {
				return errors.New("the NATS server did not start")
			}
			env.Setenv("NO_COLOR", "1")
			env.Setenv("USER", "tester")
			// Who answers is the login name (the record's, not a --by).
			env.Setenv("WHO", (&app{getenv: os.Getenv}).whoami())
			env.Setenv("NATS_URL", srv.ClientURL())
			// The user's configuration and cache directories, the
			// script's own and outside the workspace: else every script
			// (of every run) would share /no-home's — its seals' witness
			// log, and a search index named by the server's address,
			// which another script's server may have had before.
			for _, v := range []string{"XDG_CONFIG_HOME", "XDG_CACHE_HOME"} {
				d, err := os.MkdirTemp("", "harness-nats-xdg-")
				if err != nil {
					return err
				}
				env.Defer(func() { _ = os.RemoveAll(d) })
				env.Setenv(v, d)
			}
			return os.MkdirAll(filepath.Join(env.WorkDir, "other"), 0o755)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":      cmdExits,
			"validjson":  cmdValidJSON,
			"eventually": cmdEventually,
			"indexed":    cmdIndexed,
		},
	})
}

// cmdEventually runs a command again and again until its stdout matches a
// pattern, for up to 30 seconds: eventually PATTERN command args...
func cmdEventually(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: eventually PATTERN command [args...]")
	}
	re, err := regexp.Compile("(?m)" + args[0])
	ts.Check(err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := ts.Exec(args[1], args[2:]...)
		out := ts.ReadFile("stdout")
		if err == nil && re.MatchString(out) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("after 30s, %s %v still does not print %q (last: %v)\n%s", args[1], args[2:], args[0], err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cmdIndexed waits until the machine's search index (harness/search in
// $XDG_CACHE_HOME), as another process keeps it, holds what a search
// looks for: it runs harness search ARGS on a copy of the index, which
// that search brings up to date — never on the index itself — again and
// again until its stdout matches a pattern, for up to 30 seconds:
// indexed PATTERN search-args... (A copy taken while the index is
// written may miss the last writes: the next try takes another.)
func cmdIndexed(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: indexed PATTERN search-args...")
	}
	re, err := regexp.Compile("(?m)" + args[0])
	ts.Check(err)
	cache := ts.Getenv("XDG_CACHE_HOME")
	deadline := time.Now().Add(30 * time.Second)
	for {
		// Outside the workspace, as the user's cache directory is (one in
		// the workspace is not used).
		copied, err := os.MkdirTemp("", "harness-nats-indexed-")
		ts.Check(err)
		if err := copyTree(filepath.Join(cache, "harness", "search"), filepath.Join(copied, "harness", "search")); err != nil {
			_ = os.RemoveAll(copied)
			ts.Fatalf("copy the index: %v", err)
		}
		ts.Setenv("XDG_CACHE_HOME", copied)
		err = ts.Exec("harness", append([]string{"search"}, args[1:]...)...)
		ts.Setenv("XDG_CACHE_HOME", cache)
		out := ts.ReadFile("stdout")
		ts.Check(os.RemoveAll(copied))
		if err == nil && re.MatchString(out) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("after 30s, a search of a copy of the index still does not print %q (last: %v)\n%s", args[0], err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// copyTree copies the directories and regular files under from to to
// (from missing: to is made empty).
func copyTree(from, to string) error {
	if err := os.MkdirAll(to, 0o700); err != nil {
		return err
	}
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed meanwhile (a file Pebble replaced)
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o700)
		case d.Type().IsRegular():
			b, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o600)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
