package main

import (
	"errors"
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
