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
// first ended; without such a reading, the helper walks, and covers it
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
