package sandbox_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/sandbox/internal/helper"
)

// startErr starts line in spec and returns the start's error; a command
// that starts is waited for (and its output is returned).
func startErr(t *testing.T, spec sandbox.Spec, line string) (string, error) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	defer out.Close()
	c := &sandbox.Cmd{Spec: spec, Line: line, Stdout: out, Stderr: out}
	if err := c.Start(context.Background()); err != nil {
		return "", err
	}
	_, err = c.Wait()
	require.NoError(t, err)
	data, err := os.ReadFile(out.Name())
	require.NoError(t, err)
	return string(data), nil
}

// nestedSpec is the default spec of ws, whose nested entries come from
// an observer's reading taken just before each start (reading) or from
// the walk; read takes that reading.
func nestedSpec(t *testing.T, ws string, reading bool) (spec sandbox.Spec, read func()) {
	t.Helper()
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	if !reading {
		return spec, func() {}
	}
	obs, err := action.NewWorkspace(ws)
	require.NoError(t, err)
	t.Cleanup(func() { obs.Close() })
	spec.Nested = &sandbox.Nested{}
	spec.Nested.From(obs)
	return spec, func() {
		_, err := obs.Observe(context.Background())
		require.NoError(t, err)
	}
}

// A nested repository whose .git is a file (or a symbolic link) leads
// git to a git directory as the workspace's own .git does: one that
// lies in a writable root outside the workspace (the workspace's Go
// build cache, which every command writes and nobody observes), or that
// a link or a missing entry on the way puts there, refuses every command
// (whether the nested entries come from the walk or from the observer's
// reading, in workspace-write and in read-only) and says which .git and
// why — else a later command writes core.fsmonitor there, and the
// person's git status at the workspace's root, which recurses into the
// gitlink, runs it. One that leads into the workspace is kept as a
// nested .git directory is; one that leads elsewhere out of reach runs.
func TestNestedGitFileIntoAWritableRoot(t *testing.T) {
	personHome(t)
	for _, reading := range []bool{false, true} {
		t.Run(map[bool]string{false: "walk", true: "reading"}[reading], func(t *testing.T) {
			ws := realTemp(t)
			_, g := gitRepo(t)
			g(ws, "init", "-q")
			spec, read := nestedSpec(t, ws, reading)
			require.NotEmpty(t, spec.GoCache)
			require.NoError(t, os.MkdirAll(spec.GoCache, 0o700))
			bare := filepath.Join(spec.GoCache, "v")
			g(ws, "init", "-q", "--bare", bare)
			gitfile := filepath.Join(spec.GoCache, "gitfile")
			writeFile(t, gitfile, "gitdir: "+bare+"\n")
			require.NoError(t, os.Symlink(spec.GoCache, filepath.Join(ws, "cachelink")))
			require.NoError(t, os.MkdirAll(filepath.Join(spec.GoCache, "sub"), 0o755))
			require.NoError(t, os.Symlink(filepath.Join(spec.GoCache, "sub"), filepath.Join(ws, "hop")))
			lib := filepath.Join(ws, "vendor", "lib")
			require.NoError(t, os.MkdirAll(lib, 0o755))
			dotgit := filepath.Join(lib, ".git")
			// A directory named " .." beside the .git: git reads the path
			// after "gitdir: " whole, a leading space included.
			require.NoError(t, os.Mkdir(filepath.Join(lib, " .."), 0o755))
			fromLib, err := filepath.Rel(lib, bare)
			require.NoError(t, err)
			for _, plant := range []struct {
				name string
				make func()
				how  string
			}{
				{"a file naming a git directory in the Go cache", func() { writeFile(t, dotgit, "gitdir: "+bare+"\n") }, "to " + bare},
				{"a relative gitdir through a link in the workspace", func() { writeFile(t, dotgit, "gitdir: ../../cachelink/v\n") }, "to " + bare},
				{"the path after a NUL and line ends", func() { writeFile(t, dotgit, "gitdir: "+bare+"\x00/elsewhere\r\n\n") }, "to " + bare},
				{"a path with a leading space, read whole", func() { writeFile(t, dotgit, "gitdir:  ../../"+fromLib+"\n") }, "to " + bare},
				{"a link, then .. from where it leads", func() { writeFile(t, dotgit, "gitdir: ../../hop/../v\n") }, "through " + filepath.Join(spec.GoCache, "sub")},
				{"a gitdir in the Go cache a command could make", func() { writeFile(t, dotgit, "gitdir: "+spec.GoCache+"/later/v\n") }, "through " + spec.GoCache + "/later"},
				{"a link to the git directory", func() { require.NoError(t, os.Symlink(bare, dotgit)) }, "to " + bare},
				{"a link to a .git file in the Go cache", func() { require.NoError(t, os.Symlink(gitfile, dotgit)) }, "to " + gitfile},
			} {
				require.NoError(t, os.RemoveAll(dotgit))
				plant.make()
				for _, mode := range []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.ReadOnly} {
					s := spec
					s.Mode = mode
					read()
					out, err := startErr(t, s, "git -C vendor/lib config core.fsmonitor 'touch PWNED; false'; echo ran")
					require.ErrorIs(t, err, sandbox.ErrInvalidSpec, "%s (%s): the command ran: %s", plant.name, mode, out)
					require.Contains(t, err.Error(), "the nested vendor/lib/.git", plant.name)
					require.Contains(t, err.Error(), plant.how, plant.name)
					require.Contains(t, err.Error(), "in the writable "+spec.GoCache, plant.name)
				}
			}
			cfg, err := os.ReadFile(filepath.Join(bare, "config"))
			require.NoError(t, err)
			require.NotContains(t, string(cfg), "fsmonitor")
			// Git takes each of those paths as said: the same plants, run
			// by hand, lead the person's git to the cache's repository.
			writeFile(t, dotgit, "gitdir:  ../../"+fromLib+"\n")
			g(lib, "config", "user.name", "spaced")
			cfg, err = os.ReadFile(filepath.Join(bare, "config"))
			require.NoError(t, err)
			require.Contains(t, string(cfg), "spaced")
			writeFile(t, dotgit, "gitdir: ../../hop/../v\n")
			g(lib, "config", "user.name", "hopped")
			cfg, err = os.ReadFile(filepath.Join(bare, "config"))
			require.NoError(t, err)
			require.Contains(t, string(cfg), "hopped")

			// Out of every command's reach: it runs.
			elsewhere, _ := gitRepo(t)
			require.NoError(t, os.RemoveAll(dotgit))
			writeFile(t, dotgit, "gitdir: "+filepath.Join(elsewhere, ".git")+"\n")
			read()
			out, err := startErr(t, spec, "echo ran")
			require.NoError(t, err)
			require.Equal(t, "ran\n", out)

			// Inside the workspace (git init --separate-git-dir): kept as
			// a nested .git directory is — its config, hooks and info
			// read-only, made when missing — and git there still commits.
			require.NoError(t, os.RemoveAll(dotgit))
			sep := filepath.Join(ws, ".repos", "lib")
			require.NoError(t, os.MkdirAll(filepath.Dir(sep), 0o755))
			g(lib, "init", "-q", "--separate-git-dir", sep)
			require.NoError(t, os.RemoveAll(filepath.Join(sep, "hooks")))
			pwned := filepath.Join(ws, "PWNED")
			for _, attack := range []string{
				"git -C vendor/lib config core.fsmonitor 'touch " + pwned + "; false'; echo rc=$?",
				plantHook(".repos/lib/hooks", pwned),
				"mv .repos/lib .repos/away && mkdir .repos/lib; echo rc=$?",
			} {
				read()
				out, err := startErr(t, spec, attack)
				require.NoError(t, err)
				require.NotContains(t, out, "rc=0", "%s: %s", attack, out)
			}
			read()
			out, err = startErr(t, spec, "cd vendor/lib && echo x > f && git add f && git -c user.name=m -c user.email=m@example.com commit -q -m model && echo committed")
			require.NoError(t, err)
			require.Contains(t, out, "committed")
			personsCommit(t, lib, pwned)
		})
	}
}

// A command cannot choose which nested repositories a start keeps by
// making decoys that sort first: a workspace that holds more nested git
// directories than a start keeps refuses every command in
// workspace-write, and says how many, where and what to do; at the bound
// each is kept. (A read-only command keeps none, and runs; a .git
// directory without a HEAD is none.)
func TestNestedRepositoriesPastTheBound(t *testing.T) {
	personHome(t)
	for _, reading := range []bool{false, true} {
		t.Run(map[bool]string{false: "walk", true: "reading"}[reading], func(t *testing.T) {
			ws := realTemp(t)
			_, g := gitRepo(t)
			g(ws, "init", "-q")
			g(ws, "init", "-q", "zz")
			spec, read := nestedSpec(t, ws, reading)
			// .git directories without a HEAD are no repositories to git:
			// they count for nothing, and nothing is made in them.
			for i := range helper.MaxNestedGit + 1 {
				require.NoError(t, os.MkdirAll(filepath.Join(ws, fmt.Sprintf("e%02d", i), ".git"), 0o755))
			}
			pwned := filepath.Join(ws, "PWNED")
			attack := "git -C zz config core.fsmonitor 'touch " + pwned + "; false'; echo rc=$?"
			read()
			out, err := startErr(t, spec, attack)
			require.NoError(t, err)
			require.NotContains(t, out, "rc=0", out)
			require.NoFileExists(t, filepath.Join(ws, "e00", ".git", "config"))

			// With a HEAD each, as a git init makes them: decoys that sort
			// before zz.
			for i := range helper.MaxNestedGit {
				writeFile(t, filepath.Join(ws, fmt.Sprintf("a%02d", i), ".git", "HEAD"), "ref: refs/heads/main\n")
			}
			read()
			out, err = startErr(t, spec, attack)
			require.ErrorIs(t, err, sandbox.ErrInvalidSpec, out)
			msg := err.Error()
			require.Contains(t, msg, fmt.Sprintf("%d nested git directories in the workspace (a00/.git, a01/.git,", helper.MaxNestedGit+1))
			require.Contains(t, msg, fmt.Sprintf("more than the %d", helper.MaxNestedGit))
			require.Contains(t, msg, "remove those not needed")

			ro := spec
			ro.Mode = sandbox.ReadOnly
			out, err = startErr(t, ro, "echo ran")
			require.NoError(t, err)
			require.Equal(t, "ran\n", out)

			require.NoError(t, os.RemoveAll(filepath.Join(ws, "a00")))
			read()
			out, err = startErr(t, spec, attack)
			require.NoError(t, err)
			require.NotContains(t, out, "rc=0", out)
			personsCommit(t, filepath.Join(ws, "zz"), pwned)
		})
	}
}

// memBlobs keeps blobs in memory.
type memBlobs struct {
	mu sync.Mutex // guards m
	m  map[string][]byte
}

func (b *memBlobs) PutBlob(_ context.Context, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	d := hex.EncodeToString(sum[:])
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[d] = slices.Clone(data)
	return d, nil
}

func (b *memBlobs) GetBlob(_ context.Context, digest string) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	data, ok := b.m[digest]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return data, nil
}

// sandboxed is an action adapter that runs its instruction as a command
// in spec.
type sandboxed struct {
	t    *testing.T
	spec sandbox.Spec
}

func (a sandboxed) Name() string { return "run_command" }

func (a sandboxed) Execute(_ context.Context, req action.Request) (facts.Report, error) {
	out, e := run(a.t, a.spec, req.Instruction)
	if e.Code != 0 {
		return facts.Report{Status: facts.StatusFailed, Stdout: out}, nil
	}
	return facts.Report{Status: facts.StatusSucceeded, Stdout: out}, nil
}

// What a command's start makes in the workspace for the sandbox (the
// missing hooks/, config and info/ of a nested .git directory that an
// earlier command made) is made before the reading the boundary begins
// the next action with (Spec.Prepare as Boundary.Prepare): the record of
// a command that changes nothing says it changed nothing, and what harness
// made is a change before it, not the command's; the command that made
// the .git is recorded making it.
func TestPreparedBeforeTheReading(t *testing.T) {
	personHome(t)
	ws := realTemp(t)
	_, g := gitRepo(t)
	g(ws, "init", "-q")
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	obs, err := action.NewWorkspace(ws)
	require.NoError(t, err)
	defer obs.Close()
	spec.Nested = &sandbox.Nested{}
	spec.Nested.From(obs)
	spec.Prepare()
	b := &action.Boundary{Observer: obs, Granted: []action.Capability{action.Execute}, Root: ws, Prepare: spec.Prepare, Blobs: &memBlobs{m: map[string][]byte{}}}
	ctx := context.Background()
	do := func(id, line string) (action.Begun, facts.ActionCompleted) {
		req := action.Request{ActionID: id, Capability: action.Execute, Instruction: line, Adapter: "run_command", Payload: json.RawMessage(`{}`)}
		bg, refused := b.Begin(ctx, req)
		require.Nil(t, refused)
		end := b.Finish(ctx, req, bg, sandboxed{t, spec})
		require.NotNil(t, end.Completed)
		require.Equal(t, facts.StatusSucceeded, end.Completed.Report.Status, end.Completed.Report.Stdout)
		b.Since = action.Observed{Seq: 1, Hash: end.Completed.Observation.After, Manifest: end.Completed.Observation.Manifest}
		return bg, *end.Completed
	}
	paths := func(cs []facts.PathChange) string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Path)
		}
		return strings.Join(out, " ")
	}
	_, c1 := do("a1", "mkdir -p x/.git && echo 'ref: refs/heads/main' > x/.git/HEAD")
	require.Contains(t, paths(c1.Observation.Changed), "x/.git/HEAD")
	require.NotContains(t, paths(c1.Observation.Changed), "x/.git/config")
	bg, c2 := do("a2", "true")
	require.Empty(t, c2.Observation.Changed, "harness's making was put on the command")
	require.Equal(t, c2.Observation.Before, c2.Observation.After)
	require.NotNil(t, bg.Changed, "what harness made before the action is not recorded")
	require.Contains(t, paths(bg.Changed.Changed), "x/.git/config")
	require.Equal(t, facts.ByUnknown, bg.Changed.By)
	require.FileExists(t, filepath.Join(ws, "x", ".git", "config"))
}
