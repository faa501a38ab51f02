package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/sandbox"
)

// A .harness a command makes — empty, or holding only a db/, which the
// observer leaves out of its listing — is covered in the next command,
// whose nested stores come from the observer's reading taken after the
// first ended; without such a reading, the workspace is walked, and covers it
// all the same.
func TestNestedStoreMadeByACommand(t *testing.T) {
	spec := defaultSpec(t)
	ws := spec.Workspace
	obs, err := action.NewWorkspace(ws)
	require.NoError(t, err)
	defer obs.Close()
	spec.Nested = &sandbox.Nested{}
	spec.Nested.From(obs)
	ctx := context.Background()
	_, err = obs.Observe(ctx)
	require.NoError(t, err)

	out, e := run(t, spec, "mkdir -p sub/.harness/db e/.harness && echo SECRET > sub/.harness/db/LOG && echo ok")
	require.Equal(t, 0, e.Code, out)
	require.FileExists(t, filepath.Join(ws, "sub/.harness/db/LOG"))

	// No reading since the command ended: the walk.
	_, ok := sandbox.NestedBegin(spec.Nested, spec.HiddenNames)
	sandbox.NestedEnd(spec.Nested)
	require.False(t, ok, "a reading taken before the last command ended stood in for the walk")
	out, e = run(t, spec, "cat sub/.harness/db/LOG; ls e/.harness")
	require.NotEqual(t, 0, e.Code, out)
	require.NotContains(t, out, "SECRET")
	require.Contains(t, out, "Permission denied")

	// The runtime reads after the action and before the next: that
	// reading stands in for the walk, and covers both.
	snap, err := obs.Observe(ctx)
	require.NoError(t, err)
	for _, f := range snap.Files {
		require.NotContains(t, f.Path, ".harness", "the observer lists what the changed paths could not say")
	}
	rels, ok := sandbox.NestedBegin(spec.Nested, spec.HiddenNames)
	sandbox.NestedEnd(spec.Nested)
	require.True(t, ok)
	require.Equal(t, []string{".harness", "e/.harness", "sub/.harness"}, rels) // the first the workspace's own, made empty
	_, err = obs.Observe(ctx)
	require.NoError(t, err)
	out, e = run(t, spec, "cat sub/.harness/db/LOG; ls e/.harness; touch e/.harness/project.json")
	require.NotEqual(t, 0, e.Code, out)
	require.NotContains(t, out, "SECRET")
	require.Contains(t, out, "Permission denied")
	require.NoFileExists(t, filepath.Join(ws, "e/.harness/project.json"))

	// A command running beside the next start: the walk (a reading taken
	// meanwhile cannot vouch for what it makes).
	_, err = obs.Observe(ctx)
	require.NoError(t, err)
	_, ok = sandbox.NestedBegin(spec.Nested, spec.HiddenNames)
	require.True(t, ok)
	_, ok = sandbox.NestedBegin(spec.Nested, spec.HiddenNames)
	require.False(t, ok)
	sandbox.NestedEnd(spec.Nested)
	sandbox.NestedEnd(spec.Nested)
}

// A nested .harness that is a symlink, found by the reading, hides where
// it leads unless that holds the workspace, as the walk decides; one that
// is gone by the command's start is skipped.
func TestNestedStoreLinkFromTheReading(t *testing.T) {
	spec := defaultSpec(t)
	ws := spec.Workspace
	store := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(store, "CURRENT"), []byte("SECRET"), 0o644))
	for dir, target := range map[string]string{"a": store, "b": ws} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, dir), 0o755))
		require.NoError(t, os.Symlink(target, filepath.Join(ws, dir, sandbox.StoreName)))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "gone", sandbox.StoreName), 0o755))
	obs, err := action.NewWorkspace(ws)
	require.NoError(t, err)
	defer obs.Close()
	spec.Nested = &sandbox.Nested{}
	spec.Nested.From(obs)
	_, err = obs.Observe(context.Background())
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(ws, "gone", sandbox.StoreName)))
	rels, _, ok := obs.Named(spec.HiddenNames)
	require.True(t, ok)
	require.Equal(t, []string{"a/.harness", "b/.harness", "gone/.harness"}, rels)
	out, e := run(t, spec, "cat a/.harness/CURRENT; cat "+store+"/CURRENT; ls b/.harness/ | grep -c '^a$'")
	require.Equal(t, 0, e.Code, out)
	require.NotContains(t, out, "SECRET")
	require.Contains(t, out, "a/.harness/CURRENT: Permission denied")
	require.True(t, strings.HasSuffix(out, "\n1\n"), "the workspace is not hidden through b/.harness: %s", out)
}

// A repository nested in the workspace (a folder of several clones, a
// vendored one) is kept from commands as the workspace's own .git is:
// no hook planted, no config written, no .git renamed away and made anew
// — whether its git directory comes from the observer's reading or the
// walk — and the person's git commit there runs nothing of the
// command's. A command's own git commit there still works.
func TestNestedRepositoryKept(t *testing.T) {
	home := realTemp(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, reading := range []bool{false, true} {
		t.Run(map[bool]string{false: "walk", true: "reading"}[reading], func(t *testing.T) {
			ws := realTemp(t)
			nested, g := gitRepo(t)
			front := filepath.Join(ws, "front")
			require.NoError(t, os.Rename(nested, front))
			// A second one deeper, whose hooks directory is missing.
			deep, _ := gitRepo(t)
			back := filepath.Join(ws, "svc", "back")
			require.NoError(t, os.MkdirAll(filepath.Dir(back), 0o755))
			require.NoError(t, os.Rename(deep, back))
			require.NoError(t, os.RemoveAll(filepath.Join(back, ".git", "hooks")))
			spec, err := sandbox.Default(ws, "")
			require.NoError(t, err)
			ctx := context.Background()
			var obs *action.Workspace
			if reading {
				obs, err = action.NewWorkspace(ws)
				require.NoError(t, err)
				defer obs.Close()
				spec.Nested = &sandbox.Nested{}
				spec.Nested.From(obs)
			}
			// read takes the reading the next command's start uses, as
			// the runtime does before each action, and checks that it
			// finds both repositories.
			read := func() {
				if obs == nil {
					return
				}
				_, err := obs.Observe(ctx)
				require.NoError(t, err)
				rels, ok := sandbox.NestedBegin(spec.Nested, []string{".git"})
				sandbox.NestedEnd(spec.Nested)
				require.True(t, ok)
				require.Subset(t, rels, []string{"front/.git", "svc/back/.git"})
				_, err = obs.Observe(ctx)
				require.NoError(t, err)
			}
			pwned := filepath.Join(ws, "PWNED")
			for _, attack := range []string{
				plantHook("front/.git/hooks", pwned),
				plantHook("svc/back/.git/hooks", pwned),
				"printf '[core]\\n\\tfsmonitor = \"touch " + pwned + "; false\"\\n' >> front/.git/config; echo rc=$?",
				"mv front/.git front/.git.away && mkdir -p front/.git && echo rc=$?",
				"printf '[core]\\n\\thooksPath = /tmp\\n' > front/.git/info/x; echo rc=$?",
			} {
				read()
				out, _ := run(t, spec, attack)
				require.NotContains(t, out, "rc=0", "%s: %s", attack, out)
			}
			read()
			out, e := run(t, spec, "cd front && echo x > f && git add f && git -c user.name=m -c user.email=m@example.com commit -q -m model && echo committed")
			require.Equal(t, 0, e.Code, out)
			require.Contains(t, out, "committed")
			personsCommit(t, front, pwned)
			g(back, "status")
			personsCommit(t, back, pwned)
		})
	}
}
