package stock_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/stock"
)

// sessionEnv is a user's configuration directory (XDG_CONFIG_HOME) of its
// own, for the settings and trust files, and nothing else.
func sessionEnv(t *testing.T, user string) func(string) string {
	t.Helper()
	cfg := t.TempDir()
	if user != "" {
		require.NoError(t, os.MkdirAll(filepath.Join(cfg, "harness"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(cfg, "harness", "config.json"), []byte(user), 0o644))
	}
	return func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	}
}

// writeProject writes the workspace's committed settings file.
func writeProject(t *testing.T, root, content string) string {
	t.Helper()
	path := filepath.Join(root, stock.StoreDir, stock.ProjectFile)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

func TestSessionLaysTheFlagsOverTheFiles(t *testing.T) {
	root := t.TempDir()
	getenv := sessionEnv(t, `{"approve": "writes", "max_turns": 10, "max_steps": 40, "deny": ["run_command:rm *"]}`)
	turns := 3
	flags := stock.FlagSource(stock.Settings{MaxTurns: &turns, Deny: []string{"write_file:.github/*"}}, "max_turns", "deny")
	place, err := stock.Locate(root, "")
	require.NoError(t, err)
	s, err := stock.OpenSession(ctx, place, stock.SessionOptions{Getenv: getenv, Flags: flags, Drive: true, Create: true})
	require.NoError(t, err)
	defer s.Close()

	// A value the command line gives replaces the files'; patterns add up.
	require.Equal(t, 3, s.Config().MaxTurns)
	require.Equal(t, 40, s.Config().MaxSteps, "the user's file sets what no flag does")
	require.Equal(t, []string{"run_command:rm *", "write_file:.github/*"}, s.Settings().Deny)
	require.Equal(t, []stock.Scope{stock.ScopeFlag}, s.Layered.From["max_turns"])
	require.Equal(t, []stock.Scope{stock.ScopeUser, stock.ScopeFlag}, s.Layered.From["deny"])
	require.Equal(t, drive.ApproveWrites, s.Approval.Mode)
	require.Len(t, s.Approval.Deny, 2)
	require.NotNil(t, s.Approval.Resolve, "path rules resolve through the workspace's tools")
	require.Equal(t, stock.WorkspaceName(root), s.Config().Workspace)

	// The store was made, and a runtime on it runs a thread.
	require.True(t, s.Place.Exists)
	require.DirExists(t, place.DB())
	script, err := model.ParseScript("done", []byte(`{"text": "Done."}`))
	require.NoError(t, err)
	rt, free, err := s.Runtime(stock.WithModel(script))
	require.NoError(t, err)
	defer free()
	out, err := rt.Start(ctx, s.Stock.Actor, "t1", "Say done")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)

	// Flags that cannot work are refused before anything is opened.
	steps := 0
	_, err = stock.NewSession(place, stock.SessionOptions{Getenv: getenv, Drive: true,
		Flags: stock.FlagSource(stock.Settings{MaxSteps: &steps}, "max_steps")})
	require.ErrorIs(t, err, stock.ErrBadSettings)
	require.ErrorContains(t, err, "max_steps 0")
	_, err = stock.NewSession(place, stock.SessionOptions{Getenv: getenv,
		Flags: stock.FlagSource(stock.Settings{Approve: "sometimes"}, "approve")})
	require.ErrorIs(t, err, stock.ErrBadSettings)
}

func TestSessionLeavesOutWhatAnUntrustedFileWidens(t *testing.T) {
	root := t.TempDir()
	project := writeProject(t, root, `{"approve": "all", "allow": ["run_command:*"], "deny": ["write_file:secret*"], "sandbox": "off", "max_turns": 500}`)
	getenv := sessionEnv(t, "")
	place, err := stock.Locate(root, "")
	require.NoError(t, err)
	s, err := stock.NewSession(place, stock.SessionOptions{Getenv: getenv, Drive: true})
	require.NoError(t, err)
	defer s.Close()

	// What the repository's file narrows applies; what it widens does not.
	require.Equal(t, []string{"write_file:secret*"}, s.Settings().Deny)
	require.Empty(t, s.Settings().Allow)
	require.Equal(t, drive.ApproveAsk, s.Approval.Mode)
	require.Equal(t, stock.DefaultMaxTurns, s.Config().MaxTurns)
	require.Equal(t, sandbox.WorkspaceWrite, s.Stock.Sandbox.Mode)
	require.Contains(t, s.Notice(), project)
	require.Len(t, s.Ignored(), 1)
	require.ElementsMatch(t, []string{"approve", "allow", "sandbox", "max_turns"}, s.Ignored()[0].Ignored)
	// The policy a thread would record names the file and what it left out.
	pol, given, err := s.Policy("ana")
	require.NoError(t, err)
	require.True(t, given)
	require.Len(t, pol.Ignored, 1)
	require.Equal(t, project, pol.Ignored[0].Path)
	require.ElementsMatch(t, []string{"approve", "allow"}, pol.Ignored[0].Ignored)
	// The record of the runtime's configuration says so too.
	var recorded bool
	for _, src := range s.Config().Settings {
		if src.Path == project {
			recorded = true
			require.Contains(t, src.Ignored, "sandbox")
		}
	}
	require.True(t, recorded, "the configuration records the project file")

	// The person's command line widens as it likes.
	s2, err := stock.NewSession(place, stock.SessionOptions{Getenv: getenv, Drive: true,
		Flags: stock.FlagSource(stock.Settings{Approve: "writes"}, "approve")})
	require.NoError(t, err)
	defer s2.Close()
	require.Equal(t, drive.ApproveWrites, s2.Approval.Mode)
	require.Equal(t, []string{"write_file:secret*"}, s2.Settings().Deny)

	// Once the person trusts that content, it applies.
	src := s.Layered.Trustable()
	require.Len(t, src, 1)
	require.NoError(t, place.TrustSource(getenv, src[0]))
	s3, err := stock.NewSession(place, stock.SessionOptions{Getenv: getenv, Drive: true})
	require.NoError(t, err)
	defer s3.Close()
	require.Equal(t, drive.ApproveAll, s3.Approval.Mode)
	require.Equal(t, 500, s3.Config().MaxTurns)
}

func TestSessionEntersTheThreadsWorkspace(t *testing.T) {
	dir := t.TempDir()
	ws1, ws2, storeDir := filepath.Join(dir, "ws1"), filepath.Join(dir, "ws2"), filepath.Join(dir, "store")
	for _, d := range []string{ws1, ws2} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	getenv := sessionEnv(t, "")
	script, err := model.ParseScript("done", []byte(`{"text": "Done."}`))
	require.NoError(t, err)
	start := func(root, id string, opts ...harness.Option) {
		t.Helper()
		p, err := stock.Locate(root, storeDir)
		require.NoError(t, err)
		s, err := stock.OpenSession(ctx, p, stock.SessionOptions{Getenv: getenv, Create: true, Harness: opts})
		require.NoError(t, err)
		defer s.Close()
		rt, _, err := s.Runtime(stock.WithModel(script))
		require.NoError(t, err)
		_, err = rt.Start(ctx, s.Stock.Actor, id, "Say done")
		require.NoError(t, err)
	}
	start(ws1, "t1")
	start(ws1, "far", harness.WithWorkspace("elsewhere.example:/srv/app"))
	start(ws1, "gone", harness.WithWorkspace(stock.WorkspaceName(filepath.Join(dir, "gone"))))
	start(ws1, "relative", harness.WithWorkspace("ws1")) // found from the current directory, it would be

	// From another directory, with the same store: the thread's own
	// workspace is entered, its tools confined there.
	p2, err := stock.Locate(ws2, storeDir)
	require.NoError(t, err)
	s, err := stock.OpenSession(ctx, p2, stock.SessionOptions{Getenv: getenv})
	require.NoError(t, err)
	defer s.Close()
	moved, ok, err := s.Enter(ctx, "t1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, stock.Entered{From: stock.WorkspaceName(ws2), To: stock.WorkspaceName(ws1)}, moved)
	require.Equal(t, ws1, s.Place.Root)
	require.Equal(t, ws1, s.Stock.Place.Root)
	require.Equal(t, stock.WorkspaceName(ws1), s.Config().Workspace)
	// A runtime built now observes ws1.
	rt, free, err := s.Runtime()
	require.NoError(t, err)
	require.Equal(t, ws1, rt.Services.Workspace)
	free()
	// Entered already: nothing to do.
	_, ok, err = s.Enter(ctx, "t1")
	require.NoError(t, err)
	require.False(t, ok)

	// Another machine's, or a directory this one lacks, is refused.
	_, _, err = s.Enter(ctx, "far")
	require.ErrorIs(t, err, stock.ErrOtherMachine)
	require.ErrorContains(t, err, "thread far works in elsewhere.example:/srv/app")
	_, _, err = s.Enter(ctx, "gone")
	require.ErrorIs(t, err, stock.ErrNoWorkspace)
	t.Chdir(dir)
	_, _, err = s.Enter(ctx, "relative")
	require.ErrorIs(t, err, stock.ErrNoWorkspace, "a relative workspace is never entered")
	require.Equal(t, ws1, s.Place.Root, "a refused Enter leaves the session where it was")
	// A thread that is not there is the view's error.
	_, _, err = s.Enter(ctx, "nobody")
	require.ErrorIs(t, err, harness.ErrUnknownThread)

	// A store inside its workspace (copied with it) never acts in another.
	require.NoError(t, s.Close())
	copyRoot := filepath.Join(dir, "copy")
	require.NoError(t, os.CopyFS(copyRoot, os.DirFS(dir+"/store")))
	inside := stock.Place{Root: filepath.Dir(copyRoot), Store: copyRoot, Exists: true}
	c, err := stock.OpenSession(ctx, inside, stock.SessionOptions{Getenv: getenv, ReadOnly: true})
	require.NoError(t, err)
	defer c.Close()
	_, _, err = c.Enter(ctx, "t1")
	require.ErrorIs(t, err, stock.ErrStoreCameWith)
}

func TestSessionNamesABadSettingsFile(t *testing.T) {
	root := t.TempDir()
	place, err := stock.Locate(root, "")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(place.Store, 0o755))
	bad := place.SettingsFile()
	require.NoError(t, os.WriteFile(bad, []byte(`{"approve": 5}`), 0o644))
	getenv := sessionEnv(t, "")

	// A session that may drive threads refuses it, naming the file and
	// the key.
	_, err = stock.NewSession(place, stock.SessionOptions{Getenv: getenv, Drive: true})
	require.Error(t, err)
	require.ErrorContains(t, err, bad)
	require.ErrorContains(t, err, "approve")

	// One that only reads goes on without it, and says why.
	s, err := stock.OpenSession(ctx, place, stock.SessionOptions{Getenv: getenv, Lenient: true, Create: true})
	require.NoError(t, err)
	defer s.Close()
	require.ErrorContains(t, s.SettingsErr, bad)

	// A key this program does not know is named as such.
	require.NoError(t, os.WriteFile(bad, []byte(`{"aprove": "all"}`), 0o644))
	_, err = stock.NewSession(place, stock.SessionOptions{Getenv: getenv})
	require.ErrorIs(t, err, stock.ErrUnknownSetting)
	require.ErrorContains(t, err, bad)

	// A settings file that is a directory is no settings file.
	require.NoError(t, os.Remove(bad))
	require.NoError(t, os.Mkdir(bad, 0o755))
	_, err = stock.NewSession(place, stock.SessionOptions{Getenv: getenv})
	require.ErrorIs(t, err, stock.ErrSettingsFile)
	require.ErrorContains(t, err, bad)
}

func TestSessionRuntimesAfterClose(t *testing.T) {
	root := t.TempDir()
	place, err := stock.Locate(root, "")
	require.NoError(t, err)
	s, err := stock.OpenSession(ctx, place, stock.SessionOptions{Getenv: sessionEnv(t, ""), Create: true})
	require.NoError(t, err)
	require.NoError(t, s.Release())
	_, _, err = s.Runtime()
	require.True(t, errors.Is(err, stock.ErrSessionClosed))
	require.NoError(t, s.Reopen(ctx, 0))
	_, free, err := s.Runtime()
	require.NoError(t, err)
	free()
	free() // freeing twice closes once
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
}

func TestSessionSubmitsAndAmendsAThreadsPolicy(t *testing.T) {
	root := t.TempDir()
	place, err := stock.Locate(root, "")
	require.NoError(t, err)
	flags := stock.FlagSource(stock.Settings{Allow: []string{"run_command:go test *"}}, "allow")
	s, err := stock.OpenSession(ctx, place, stock.SessionOptions{Getenv: sessionEnv(t, ""), Flags: flags, Create: true})
	require.NoError(t, err)
	defer s.Close()
	pol, given, err := s.Policy("ana")
	require.NoError(t, err)
	require.True(t, given)

	id, seq, err := s.Submit(ctx, "", "Fix the tests", &pol)
	require.NoError(t, err)
	require.Equal(t, "t1", id)
	require.Equal(t, uint64(1), seq, "the policy is in the prompt's append")
	_, _, err = s.Submit(ctx, "t1", "Again", nil)
	require.ErrorIs(t, err, harness.ErrThreadExists)

	rt, free, err := s.Runtime(stock.WithoutObserver())
	require.NoError(t, err)
	defer free()
	th := rt.Thread(s.Stock.Actor, id)
	own, _, ok, err := drive.ThreadPolicy(ctx, th)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []string{"run_command:go test *"}, own.Allow)

	// A person's "always" adds to the thread's own policy, with its source.
	require.NoError(t, s.AmendPolicy(ctx, th, stock.AnswerSource("write_file:docs/*"), "ana"))
	own, _, _, err = drive.ThreadPolicy(ctx, th)
	require.NoError(t, err)
	require.Equal(t, []string{"run_command:go test *", "write_file:docs/*"}, own.Allow)
	require.Equal(t, "ana", own.By)
	var sources []string
	for _, src := range own.Sources {
		sources = append(sources, src.Rule+" "+src.Scope)
	}
	require.Equal(t, []string{"allow:run_command:go test * flag", "allow:write_file:docs/* answer"}, sources)

	// A rule that does not parse changes nothing.
	err = s.AmendPolicy(ctx, th, stock.AnswerSource(":docs/*"), "ana")
	require.ErrorIs(t, err, stock.ErrBadSettings)
	after, _, _, err := drive.ThreadPolicy(ctx, th)
	require.NoError(t, err)
	require.Equal(t, own, after)
}

func TestLayeredFiles(t *testing.T) {
	root := t.TempDir()
	project := writeProject(t, root, `{"approve": "all", "deny": ["run_command:rm *"], "colour": "blue"}`)
	place, err := stock.Locate(root, "")
	require.NoError(t, err)
	l, err := place.LoadLayered(sessionEnv(t, ""))
	require.ErrorIs(t, err, stock.ErrUnknownSetting)
	files := l.Files()
	require.Len(t, files, 3) // user, project, local
	p := files[1]
	require.Equal(t, stock.ScopeProject, p.Scope)
	require.Equal(t, project, p.Path)
	require.True(t, p.Exists && p.Inside && !p.Trusted)
	require.Equal(t, []string{"deny"}, p.Applied)
	require.Equal(t, []string{"approve"}, p.Ignored)
	require.Equal(t, []string{"colour"}, p.Unknown)
	require.Contains(t, p.Error, "colour")
	require.False(t, files[2].Exists)
}
