package stock_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/seal"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tools"
)

// A command never reads the person's harness settings (serve tokens) or
// the trust they gave: the user-scope directory is hidden in its sandbox,
// while the workspace reads as ever.
func TestSandboxHidesTheUserScope(t *testing.T) {
	if err := sandbox.Probe().Err(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	dir := filepath.Join(config, "harness")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	secret := filepath.Join(dir, "config.json")
	require.NoError(t, os.WriteFile(secret, []byte(`{"serve": {"tokens": {"ana": "s3cret"}}}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, stock.TrustFileName), []byte(`{}`), 0o600))

	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644))
	place, err := stock.Locate(root, "")
	require.NoError(t, err)
	cfg, err := harness.NewConfig()
	require.NoError(t, err)
	st, err := stock.NewStock(place, cfg)
	require.NoError(t, err)
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	require.Contains(t, st.Sandbox.Hidden, real)

	run := func(line string) (int, string) {
		f, err := os.CreateTemp(t.TempDir(), "out")
		require.NoError(t, err)
		defer f.Close()
		c := &sandbox.Cmd{Spec: st.Sandbox, Line: line, Stdout: f, Stderr: f}
		require.NoError(t, c.Start(ctx))
		e, err := c.Wait()
		require.NoError(t, err)
		out, err := os.ReadFile(f.Name())
		require.NoError(t, err)
		return e.Code, string(out)
	}
	code, out := run("cat a.txt")
	require.Equal(t, 0, code, out)
	require.Equal(t, "alpha\n", out)
	code, out = run("cat " + secret + "; ls " + dir)
	require.NotEqual(t, 0, code, out)
	require.NotContains(t, out, "s3cret")
	require.NotContains(t, out, stock.TrustFileName)
}

// harness run in $HOME (or in a dotfiles repository) has the user's own
// settings inside the workspace, where a command could have written them:
// what they widen needs trust as a project's does, the sandbox hides them
// all the same, and the file tools refuse to write them.
func TestUserScopeInsideTheWorkspace(t *testing.T) {
	if err := sandbox.Probe().Err(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, ".config"))
	dir := filepath.Join(root, ".config", "harness")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"approve": "all", "sandbox": "off", "deny": ["run_command:rm *"]}`), 0o600))

	place, err := stock.Locate(root, "")
	require.NoError(t, err)
	l, err := place.LoadLayered(os.Getenv)
	require.NoError(t, err)
	require.Empty(t, l.Settings.Approve, "a widening key of a user file inside the workspace is left out")
	require.Empty(t, l.Settings.Sandbox)
	require.Equal(t, []string{"run_command:rm *"}, l.Settings.Deny, "what narrows applies")
	require.Contains(t, l.Notice(), "config.json")

	cfg, err := harness.NewConfig()
	require.NoError(t, err)
	st, err := stock.NewStock(place, cfg)
	require.NoError(t, err)
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	require.Contains(t, st.Sandbox.Hidden, real)
	err = st.Tools.Precheck(tools.WriteFile, []byte(`{"path": ".config/harness/config.json", "content": "{\"approve\": \"all\"}"}`))
	require.ErrorIs(t, err, tools.ErrProtected)
}

// A session that drives threads makes the person's key on first use, in
// a configuration directory that did not exist before its stock was made,
// and no command can read it, nor the witness log beside it.
func TestSandboxHidesTheKey(t *testing.T) {
	if err := sandbox.Probe().Err(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	config := filepath.Join(t.TempDir(), "fresh")
	t.Setenv("XDG_CONFIG_HOME", config)
	root := t.TempDir()
	place, err := stock.Locate(root, "")
	require.NoError(t, err)
	s, err := stock.NewSession(place, stock.SessionOptions{Drive: true})
	require.NoError(t, err)
	defer s.Close()
	st, sl := s.Stock, s.Stock.Sealer
	require.NoError(t, st.Unsealed)
	key := filepath.Join(stock.SealDir(os.Getenv), seal.KeyFile)
	require.FileExists(t, key)
	require.NoError(t, os.WriteFile(sl.Witness.Path, []byte("{}\n"), 0o600))

	f, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	defer f.Close()
	c := &sandbox.Cmd{Spec: st.Sandbox, Line: "cat " + key + "; cat " + sl.Witness.Path + "; ls " + filepath.Dir(key), Stdout: f, Stderr: f}
	require.NoError(t, c.Start(ctx))
	e, err := c.Wait()
	require.NoError(t, err)
	out, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	require.NotEqual(t, 0, e.Code, string(out))
	require.NotContains(t, string(out), "PRIVATE KEY")
	require.NotRegexp(t, `(?m)^key\.pem$`, string(out))
}

// A configuration directory inside the workspace (harness run in $HOME)
// holds no key: nothing is sealed with one a command could have read.
func TestNoKeyInTheWorkspace(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, ".config"))
	place, err := stock.Locate(root, "")
	require.NoError(t, err)
	_, err = place.Sealer(os.Getenv)
	require.ErrorIs(t, err, stock.ErrKeyInWorkspace)
	s, err := stock.NewSession(place, stock.SessionOptions{Drive: true})
	require.NoError(t, err)
	require.Nil(t, s.Stock.Sealer)
	require.ErrorIs(t, s.Stock.Unsealed, stock.ErrKeyInWorkspace)
	require.NoError(t, s.Close())
	require.NoDirExists(t, stock.SealDir(os.Getenv))

	// Nor where a relative $XDG_CONFIG_HOME leads: it is ignored, as
	// the XDG spec says, for $HOME/.config; with $HOME relative too there
	// is no key at all.
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "cfg")
	require.Equal(t, filepath.Join(home, ".config", "harness", stock.SealDirName), stock.SealDir(os.Getenv))
	t.Setenv("HOME", "home")
	_, err = place.Sealer(os.Getenv)
	require.ErrorIs(t, err, stock.ErrNoUserConfig)

	// Nor inside a store kept elsewhere.
	store := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(store, "config"))
	place, err = stock.Locate(t.TempDir(), store)
	require.NoError(t, err)
	_, err = place.Sealer(os.Getenv)
	require.ErrorIs(t, err, stock.ErrKeyInWorkspace)
}
