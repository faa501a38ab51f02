package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/require"
)

// TestNATSScripts runs the scripts in testdata/nats against a real NATS
// server with JetStream, embedded in the test: HARNESS_STORE names it, as a
// user whose threads outgrew one machine would.
func TestNATSScripts(t *testing.T) {
	srv, err := server.NewServer(&server.Options{
		ServerName: "harness-cli-test",
		Host:       "127.0.0.1",
		Port:       -1,
		JetStream:  true,
		StoreDir:   t.TempDir(),
		NoLog:      true,
		NoSigs:     true,
	})
	require.NoError(t, err)
	srv.Start()
	t.Cleanup(func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	})
	require.True(t, srv.ReadyForConnections(10*time.Second), "the NATS server did not start")

	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/nats",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			env.Setenv("USER", "tester")
			// Who answers is the login name (the record's, not a --by).
			env.Setenv("WHO", (&app{getenv: os.Getenv}).whoami())
			env.Setenv("NATS_URL", srv.ClientURL())
			return os.MkdirAll(filepath.Join(env.WorkDir, "other"), 0o755)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":     cmdExits,
			"validjson": cmdValidJSON,
		},
	})
}
