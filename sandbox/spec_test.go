package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox"
)

func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		mode sandbox.Mode
		err  string
	}{
		{"workspace-write", sandbox.WorkspaceWrite, ""},
		{"read-only", sandbox.ReadOnly, ""},
		{"off", sandbox.Off, ""},
		{"", "", `mode "" is not one of workspace-write, read-only, off`},
		{"Off", "", `mode "Off" is not one of`},
		{"danger-full-access", "", `mode "danger-full-access" is not one of`},
	} {
		m, err := sandbox.ParseMode(tc.in)
		if tc.err != "" {
			require.ErrorIs(t, err, sandbox.ErrInvalidSpec, tc.in)
			require.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.mode, m)
	}
}

// Default hides the store as it resolves — a symlinked .harness, and a
// store given elsewhere — and every nested one by name; it writes the
// workspace and gives commands the workspace's own Go build cache.
func TestDefault(t *testing.T) {
	ws := t.TempDir()
	store := filepath.Join(t.TempDir(), "store")
	require.NoError(t, os.Mkdir(store, 0o755))
	require.NoError(t, os.Symlink(store, filepath.Join(ws, sandbox.StoreName)))
	elsewhere := t.TempDir()

	sandbox.SetRuntimeRoots(t, t.TempDir(), t.TempDir()) // no /run/user/<uid>
	spec, err := sandbox.Default(ws, elsewhere)
	require.NoError(t, err)
	require.Equal(t, sandbox.WorkspaceWrite, spec.Mode)
	require.False(t, spec.Network)
	require.Equal(t, ws, spec.Workspace)
	rd := sandbox.RuntimeDirPath()
	require.Equal(t, []string{store, elsewhere, rd}, spec.Hidden, "the .harness symlink's target, the store given, the runtime directory")
	require.Equal(t, []string{sandbox.StoreName}, spec.HiddenNames)
	cache, err := sandbox.WorkspaceGoCache(ws)
	require.NoError(t, err)
	require.Equal(t, cache, spec.GoCache)
	require.Regexp(t, `/harness/workspaces/[0-9a-f]{16}/go-build$`, cache)
	require.NoError(t, spec.Validate())

	// Another workspace has a cache of its own; none is the user's.
	other, err := sandbox.Default(t.TempDir(), "")
	require.NoError(t, err)
	require.NotEqual(t, spec.GoCache, other.GoCache)
	user, err := os.UserCacheDir()
	require.NoError(t, err)
	require.NotEqual(t, filepath.Join(user, "go-build"), spec.GoCache)
	_, err = sandbox.WorkspaceGoCache("relative")
	require.ErrorIs(t, err, sandbox.ErrInvalidSpec)

	// The same store given twice is hidden once.
	spec, err = sandbox.Default(ws, filepath.Join(ws, sandbox.StoreName))
	require.NoError(t, err)
	require.Equal(t, []string{store, rd}, spec.Hidden)

	for _, bad := range []string{"", filepath.Join(ws, "missing"), filepath.Join(ws, "file")} {
		require.NoError(t, os.WriteFile(filepath.Join(ws, "file"), nil, 0o644))
		_, err := sandbox.Default(bad, "")
		require.ErrorIs(t, err, sandbox.ErrInvalidSpec, "%q", bad)
	}
}

func TestValidate(t *testing.T) {
	ws := t.TempDir()
	ok := sandbox.Spec{Mode: sandbox.WorkspaceWrite, Workspace: ws}
	for _, tc := range []struct {
		name   string
		change func(*sandbox.Spec)
		err    string
	}{
		{"fine", func(*sandbox.Spec) {}, ""},
		{"off needs a workspace too", func(s *sandbox.Spec) { s.Mode = sandbox.Off }, ""},
		{"no mode", func(s *sandbox.Spec) { s.Mode = "" }, `mode "" is not one of`},
		{"relative workspace", func(s *sandbox.Spec) { s.Workspace = "ws" }, `workspace "ws" is not an absolute path`},
		{"no workspace", func(s *sandbox.Spec) { s.Workspace = "" }, `workspace "" is not an absolute path`},
		{"relative writable", func(s *sandbox.Spec) { s.Writable = []string{"out"} }, `Writable: "out" is not an absolute path`},
		{"relative read-only", func(s *sandbox.Spec) { s.ReadOnly = []string{"x"} }, `ReadOnly: "x" is not an absolute path`},
		{"relative hidden", func(s *sandbox.Spec) { s.Hidden = []string{".harness"} }, `Hidden: ".harness" is not an absolute path`},
		{"relative go cache", func(s *sandbox.Spec) { s.GoCache = "cache" }, `GoCache "cache" is not an absolute path`},
		{"hidden is the workspace", func(s *sandbox.Spec) { s.Hidden = []string{ws} }, "hidden path " + ws + " holds " + ws},
		{"hidden holds the workspace", func(s *sandbox.Spec) { s.Hidden = []string{filepath.Dir(ws)} }, "which the command needs"},
		{"hidden is /", func(s *sandbox.Spec) { s.Hidden = []string{"/"} }, "which the command needs"},
		{"hidden holds a writable root", func(s *sandbox.Spec) { s.Writable = []string{"/opt/x/y"}; s.Hidden = []string{"/opt/x"} }, "holds /opt/x/y"},
		{"hidden under the workspace", func(s *sandbox.Spec) { s.Hidden = []string{filepath.Join(ws, ".harness")} }, ""},
		{"a path as a hidden name", func(s *sandbox.Spec) { s.HiddenNames = []string{"a/.harness"} }, `HiddenNames: "a/.harness" is not a file name`},
		{"dot-dot as a hidden name", func(s *sandbox.Spec) { s.HiddenNames = []string{".."} }, `is not a file name`},
		{"an empty env name", func(s *sandbox.Spec) { s.Env = []string{""} }, `Env: "" is not a variable name`},
		{"a bare star", func(s *sandbox.Spec) { s.Env = []string{"*"} }, `Env: "*" is not a variable name`},
		{"an assignment", func(s *sandbox.Spec) { s.Env = []string{"A=1"} }, `Env: "A=1" is not a variable name`},
		{"unknown simulated feature", func(s *sandbox.Spec) { s.SimulateMissing = []sandbox.Feature{"seccomp"} }, `SimulateMissing: "seccomp" is not`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ok.Clone()
			tc.change(&s)
			err := s.Validate()
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, sandbox.ErrInvalidSpec)
			require.ErrorContains(t, err, tc.err)
		})
	}
}

// The environment is an allow-list: what it names passes, exactly, and
// nothing else; TMPDIR and GOCACHE are the command's, not the harness's.
func TestEnviron(t *testing.T) {
	spec := sandbox.Spec{Mode: sandbox.WorkspaceWrite, Workspace: "/ws", GoCache: "/cache/go-build", Env: []string{"MYAPP_*", "EXTRA"}}
	env := []string{
		"PATH=/bin", "HOME=/home/u", "LANG=C.UTF-8", "LC_ALL=C", "LC_CTYPE=C", "TERM=dumb", "TZ=UTC", "USER=u", "LOGNAME=u",
		"GOPATH=/go", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off", "GONOSUMDB=x", "GOPRIVATE=x", "CGO_ENABLED=0", "GOMODCACHE=/go/pkg/mod",
		"OPENAI_API_KEY=sk", "ANTHROPIC_API_KEY=sk", "OPENAI_BASE_URL=https://u:p@h", "OPENAI_CUSTOM_HEADERS=x", "GITHUB_TOKEN=t",
		"path=/lower", "LC=no", "TMPDIR=/tmp/harness-tmp", "GOCACHE=/home/u/.cache/go-build",
		"MYAPP_ONE=1", "MYAPPTWO=no", "EXTRA=e", "EXTRA_NOT=no", "PATH=/second", "NOEQUALS", "=C:=C:\\",
	}
	got := spec.Environ(env, "/tmp/harness-cmd-1")
	require.Equal(t, []string{
		"PATH=/bin", "HOME=/home/u", "LANG=C.UTF-8", "LC_ALL=C", "LC_CTYPE=C", "TERM=dumb", "TZ=UTC", "USER=u", "LOGNAME=u",
		"GOPATH=/go", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off", "GONOSUMDB=x", "GOPRIVATE=x", "CGO_ENABLED=0", "GOMODCACHE=/go/pkg/mod",
		"MYAPP_ONE=1", "EXTRA=e",
		"TMPDIR=/tmp/harness-cmd-1", "GOCACHE=/cache/go-build",
	}, got)

	// Mode off: the user's own GOCACHE passes (or none), never the one
	// sandboxed commands write.
	spec.Mode = sandbox.Off
	require.Equal(t, []string{"GOCACHE=/mine", "TMPDIR=/t"}, spec.Environ([]string{"GOCACHE=/mine", "SECRET=x"}, "/t"))
	require.Equal(t, []string{"TMPDIR=/t"}, spec.Environ([]string{"SECRET=x"}, "/t"))
	require.Contains(t, spec.EnvNames(), "GOCACHE")

	spec.Mode = sandbox.WorkspaceWrite
	spec.GoCache = ""
	require.Equal(t, []string{"TMPDIR=/t"}, spec.Environ([]string{"GOCACHE=/mine", "SECRET=x"}, "/t"), "no GoCache: GOCACHE is not passed")
}

func TestRecord(t *testing.T) {
	ws := t.TempDir()
	sandbox.SetRuntimeRoots(t, t.TempDir(), t.TempDir()) // no /run/user/<uid>
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	r := spec.Record()
	require.NoError(t, r.Validate())
	require.Equal(t, facts.SandboxWorkspaceWrite, r.Mode)
	require.False(t, r.Network)
	require.Equal(t, []string{ws, spec.GoCache}, r.Writable)
	require.Equal(t, []string{filepath.Join(ws, ".harness"), sandbox.RuntimeDirPath()}, r.Hidden)
	require.Equal(t, []string{".harness"}, r.HiddenNames)
	require.Equal(t, filepath.Join(os.TempDir(), "harness-cmd-*"), r.Temp)
	require.Contains(t, r.Env, "PATH")
	require.Contains(t, r.Env, "LC_*")
	require.Contains(t, r.Env, "TMPDIR")
	require.Contains(t, r.Env, "GOCACHE")
	require.NotContains(t, r.Env, "OPENAI_API_KEY")
	require.Empty(t, r.ReadOnly, "no git repository")

	// A git repository: its hooks, config and info are read-only, and
	// those of each submodule's git directory (a name may hold "/"), but
	// not what is in their objects.
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755))
	r = spec.Record()
	// (Not a commondir or gitdir that is not there: a command may make
	// one, observed; the rest its start makes when missing.)
	require.Equal(t, []string{filepath.Join(ws, ".git/hooks"), filepath.Join(ws, ".git/config"), filepath.Join(ws, ".git/info"),
		filepath.Join(ws, ".git/config.worktree")}, r.ReadOnly)
	for _, m := range []string{"lib", "nested/name", "lib/modules/inner"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git/modules", m, "objects/pack"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, ".git/modules", m, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".git/modules/lib/objects/HEAD"), nil, 0o644))
	r = spec.Record()
	var want []string
	for _, d := range []string{".git", ".git/modules/lib", ".git/modules/lib/modules/inner", ".git/modules/nested/name"} {
		want = append(want, filepath.Join(ws, d, "hooks"), filepath.Join(ws, d, "config"), filepath.Join(ws, d, "info"),
			filepath.Join(ws, d, "config.worktree"))
	}
	require.Equal(t, want, r.ReadOnly)

	spec.Mode = sandbox.ReadOnly
	spec.Network = true
	r = spec.Record()
	require.True(t, r.Network)
	require.Equal(t, []string{spec.GoCache}, r.Writable, "not the workspace")
	require.Empty(t, r.ReadOnly, "nothing to protect inside what is not writable")

	spec.Mode = sandbox.Off
	r = spec.Record()
	require.Equal(t, facts.Sandbox{Mode: "off", Network: true, Temp: r.Temp, Env: r.Env, Mechanism: "none"}, r)
}

// A worktree's git directory and the repository's common directory lie
// outside the workspace: they are writable roots (git commit works), with
// their hooks and config read-only, and the .git file too.
func TestGitPathsOfAWorktree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("this test needs git: %v", err)
	}
	main := t.TempDir()
	run := func(dir string, args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	run(main, "init", "-q")
	run(main, "commit", "-q", "--allow-empty", "-m", "one")
	wt := filepath.Join(t.TempDir(), "wt")
	run(main, "worktree", "add", "-q", wt)
	wt, err := filepath.EvalSymlinks(wt)
	require.NoError(t, err)
	main, err = filepath.EvalSymlinks(main)
	require.NoError(t, err)

	g := sandbox.GitPathsOf(wt)
	gitdir := filepath.Join(main, ".git", "worktrees", "wt")
	common := filepath.Join(main, ".git")
	require.Equal(t, []string{
		filepath.Join(wt, ".git"), filepath.Join(gitdir, "hooks"), filepath.Join(gitdir, "config"), filepath.Join(gitdir, "info"),
		filepath.Join(common, "hooks"), filepath.Join(common, "config"), filepath.Join(common, "info"), filepath.Join(common, "config.worktree"),
		filepath.Join(gitdir, "config.worktree"), filepath.Join(gitdir, "commondir"), filepath.Join(gitdir, "gitdir"),
		filepath.Join(common, "commondir"),
	}, g.ReadOnly)
	require.Equal(t, []string{gitdir, common}, g.Writable)
	require.Empty(t, g.Pin)

	g = sandbox.GitPathsOf(main)
	require.Equal(t, []string{filepath.Join(main, ".git/hooks"), filepath.Join(main, ".git/config"), filepath.Join(main, ".git/info"),
		filepath.Join(main, ".git/commondir"), filepath.Join(main, ".git/config.worktree"), filepath.Join(main, ".git/gitdir"),
		filepath.Join(gitdir, "commondir"), filepath.Join(gitdir, "gitdir"), filepath.Join(gitdir, "config.worktree")}, g.ReadOnly,
		"what the linked worktree's git reads to find its config, read-only")
	require.Equal(t, []string{filepath.Join(main, ".git/worktrees"), gitdir}, g.Via, "worktrees/ and the linked worktree's git directory pinned")
	require.Equal(t, filepath.Join(main, ".git"), g.Pin)
	require.Empty(t, g.Writable)

	require.Equal(t, sandbox.GitPaths{}, sandbox.GitPathsOf(t.TempDir()))
}

func TestClone(t *testing.T) {
	s := sandbox.Spec{Writable: []string{"/a"}, Hidden: []string{"/h"}, Env: []string{"E"}}
	c := s.Clone()
	c.Writable[0], c.Hidden[0], c.Env[0] = "/b", "/i", "F"
	require.Equal(t, []string{"/a"}, s.Writable)
	require.Equal(t, []string{"/h"}, s.Hidden)
	require.Equal(t, []string{"E"}, s.Env)
}

// gitRepo makes a git repository with one commit in a new temporary
// directory and returns it as it resolves, and a function that runs git in
// a directory.
func gitRepo(t *testing.T) (string, func(dir string, args ...string)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("this test needs git: %v", err)
	}
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "protocol.file.allow=always"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	dir := realTemp(t)
	run(dir, "init", "-q")
	run(dir, "commit", "-q", "--allow-empty", "-m", "one")
	return dir, run
}

func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
}

// A .git file names its git directory, and anyone who can write the
// workspace (a command, a tarball) can write it: the directory it names is
// a writable root only when it is verifiably a linked worktree's or a
// submodule's of this workspace. Each plant here is refused, and said to
// be; the workspace is the only root left.
func TestGitPathsOfAPlantedGitFile(t *testing.T) {
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	main, run := gitRepo(t)
	other := filepath.Join(realTemp(t), "other")
	run(main, "worktree", "add", "-q", other)
	otherGitdir := filepath.Join(main, ".git", "worktrees", "other")

	super, _ := gitRepo(t)
	run(super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", main, "lib")
	module := filepath.Join(super, ".git", "modules", "lib")

	for _, tc := range []struct {
		name   string
		gitdir string
		setup  func(ws string)
		why    string
	}{
		{"the root", "/", nil, "not a git directory"},
		{"home", home, nil, "not writable: the git directory " + home},
		{"the parent", "..", nil, "not a git directory"},
		{"a repository", main, nil, "not a git directory (no HEAD)"},
		{"its .git", filepath.Join(main, ".git"), nil, "neither a linked worktree's git directory"},
		{"another workspace's worktree", otherGitdir, nil, "a linked worktree of " + other + ", not of this workspace"},
		{"another workspace's submodule", module, nil, "whose core.worktree is " + filepath.Join(super, "lib") + ", not this workspace"},
		{"a missing directory", "/nonexistent/x", nil, "not a directory"},
		{"a fake worktree in the workspace leading out", "fake/worktrees/x", func(ws string) {
			// All a real worktree has, but its commondir leads to a
			// real repository outside.
			writeFile(t, filepath.Join(ws, "fake/worktrees/x/HEAD"), "ref: refs/heads/main\n")
			writeFile(t, filepath.Join(ws, "fake/worktrees/x/gitdir"), filepath.Join(ws, ".git")+"\n")
			writeFile(t, filepath.Join(ws, "fake/worktrees/x/commondir"), filepath.Join(main, ".git")+"\n")
		}, "its commondir names " + filepath.Join(main, ".git") + ", not "},
		{"a fake submodule leading to the root", "fake/.git/modules/x", func(ws string) {
			writeFile(t, filepath.Join(ws, "fake/.git/modules/x/HEAD"), "ref: refs/heads/main\n")
			writeFile(t, filepath.Join(ws, "fake/.git/modules/x/config"), "[core]\n\tworktree = /\n")
		}, "whose core.worktree is /, not this workspace"},
		{"a back-link to /dev/zero", "fake/worktrees/x", func(ws string) {
			writeFile(t, filepath.Join(ws, "fake/worktrees/x/HEAD"), "ref: refs/heads/main\n")
			require.NoError(t, os.Symlink("/dev/zero", filepath.Join(ws, "fake/worktrees/x/gitdir")))
		}, "gitdir is not a regular file"},
		{"a link to the root", "link", func(ws string) {
			require.NoError(t, os.Symlink("/", filepath.Join(ws, "link")))
		}, "not a git directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := realTemp(t)
			if tc.setup != nil {
				tc.setup(ws)
			}
			writeFile(t, filepath.Join(ws, ".git"), "gitdir: "+tc.gitdir+"\n")
			g := sandbox.GitPathsOf(ws)
			require.Empty(t, g.Writable)
			require.Contains(t, g.Refused, tc.why)
			require.Contains(t, g.ReadOnly, filepath.Join(ws, ".git"))

			spec, err := sandbox.Default(ws, "")
			require.NoError(t, err)
			r := spec.Record()
			require.Equal(t, []string{ws, spec.GoCache}, r.Writable)
			require.Equal(t, g.Refused, r.GitRefused)
		})
	}
}

// A fake worktree directory inside the workspace, well formed, is taken
// for what it claims, but it lies in the workspace: no root beyond it.
func TestGitPathsOfAFakeWorktreeInside(t *testing.T) {
	ws := realTemp(t)
	writeFile(t, filepath.Join(ws, "fake/HEAD"), "ref: refs/heads/main\n")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "fake/objects"), 0o755))
	writeFile(t, filepath.Join(ws, "fake/worktrees/x/HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(ws, "fake/worktrees/x/gitdir"), filepath.Join(ws, ".git")+"\n")
	writeFile(t, filepath.Join(ws, "fake/worktrees/x/commondir"), "../..\n")
	writeFile(t, filepath.Join(ws, ".git"), "gitdir: fake/worktrees/x\n")
	g := sandbox.GitPathsOf(ws)
	require.Empty(t, g.Refused)
	require.Empty(t, g.Writable)
	require.Contains(t, g.ReadOnly, filepath.Join(ws, "fake/config"))
}

// A real linked worktree (whose back-link may be relative) and a real
// submodule get their git directories writable; a real worktree whose
// common directory would hold the user's home directory, or the
// workspace, does not.
func TestGitPathsOfRealWorktreesAndSubmodules(t *testing.T) {
	main, run := gitRepo(t)
	wt := filepath.Join(realTemp(t), "wt")
	run(main, "worktree", "add", "-q", wt)
	gitdir := filepath.Join(main, ".git", "worktrees", "wt")
	common := filepath.Join(main, ".git")
	require.Equal(t, []string{gitdir, common}, sandbox.GitPathsOf(wt).Writable)

	// git's relative form (worktree.useRelativePaths): the same.
	rel, err := filepath.Rel(gitdir, filepath.Join(wt, ".git"))
	require.NoError(t, err)
	writeFile(t, filepath.Join(gitdir, "gitdir"), rel+"\n")
	rel, err = filepath.Rel(wt, gitdir)
	require.NoError(t, err)
	writeFile(t, filepath.Join(wt, ".git"), "gitdir: "+rel+"\n")
	g := sandbox.GitPathsOf(wt)
	require.Empty(t, g.Refused)
	require.Equal(t, []string{gitdir, common}, g.Writable)

	// The common directory is the user's home: refused.
	t.Setenv("HOME", common)
	g = sandbox.GitPathsOf(wt)
	require.Empty(t, g.Writable)
	require.Contains(t, g.Refused, common+" holds "+common)
	t.Setenv("HOME", realTemp(t))

	// A worktree inside the repository's .git: the common directory holds
	// the workspace.
	inside := filepath.Join(common, "inside")
	run(main, "worktree", "add", "-q", inside)
	g = sandbox.GitPathsOf(inside)
	require.Empty(t, g.Writable)
	require.Contains(t, g.Refused, common+" holds the workspace")

	super, _ := gitRepo(t)
	run(super, "submodule", "add", "-q", main, "lib")
	run(super, "submodule", "add", "-q", main, "nested/deep/lib")
	g = sandbox.GitPathsOf(filepath.Join(super, "lib"))
	require.Empty(t, g.Refused)
	require.Equal(t, []string{filepath.Join(super, ".git", "modules", "lib")}, g.Writable)
	require.Equal(t, filepath.Join(super, "lib", ".git"), g.ReadOnly[0])
	require.Contains(t, g.ReadOnly, filepath.Join(super, ".git", "modules", "lib", "config"))
	g = sandbox.GitPathsOf(filepath.Join(super, "nested/deep/lib"))
	require.Empty(t, g.Refused)
	require.Equal(t, []string{filepath.Join(super, ".git", "modules", "nested/deep/lib")}, g.Writable)
}

// A repository deleted and another cloned at its path is another
// workspace to the Go build cache: the first's commands could have
// poisoned a cached program, which go checks by size only (rev-trust14:
// a deleted repository's program ran in the next one at its path).
func TestWorkspaceGoCacheIsTheDirectorys(t *testing.T) {
	ws := filepath.Join(realTemp(t), "repo")
	require.NoError(t, os.Mkdir(ws, 0o755))
	first, err := sandbox.WorkspaceGoCache(ws)
	require.NoError(t, err)
	again, err := sandbox.WorkspaceGoCache(ws)
	require.NoError(t, err)
	require.Equal(t, first, again, "the same directory, the same cache")
	require.NoError(t, os.Remove(ws))
	// Birth times come from a coarse clock: a directory made again
	// within one tick, given the same inode, is not told apart (a clone
	// takes longer).
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, os.Mkdir(ws, 0o755))
	second, err := sandbox.WorkspaceGoCache(ws)
	require.NoError(t, err)
	require.NotEqual(t, first, second, "made again at the same path: a cache of its own")
}
