package stock_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// A project's AGENTS.md is read by the runtime, which sees what no
// command may: a symlink must not make it read a secret into the model's
// prompt — neither a file in a place the sandbox hides (the store under
// another name, the user's configuration) nor any file that is not
// Markdown.
func TestInstructionsSymlinksReadNoSecret(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	}
	link := func(rel, target string) {
		t.Helper()
		require.NoError(t, os.Symlink(target, filepath.Join(root, rel)))
	}
	write("state/notes.md", "SECRET in the store")
	write("conf/harness/key.pem", "SECRET key")
	write("CLAUDE.md", "the project's own words")
	write("a/x.go", "")
	write("b/x.go", "")
	write("c/x.go", "")
	link("AGENTS.md", "CLAUDE.md")
	link("a/AGENTS.md", "../state/notes.md")
	link("b/AGENTS.md", "../conf/harness/key.pem")
	link("c/AGENTS.md", "../conf/harness/notes.md")
	write("conf/harness/notes.md", "SECRET notes")

	in := stock.Instructions{Root: root, Hidden: []string{filepath.Join(root, "state"), filepath.Join(root, "conf", "harness")}}
	got, err := in.ReadInstructions(context.Background(), []string{"a", "b", "c"})
	require.NoError(t, err)
	skipped := map[string]string{}
	for _, f := range got {
		require.NotContains(t, string(f.Text), "SECRET", f.File.Path)
		skipped[f.File.Path] = f.File.Skipped
	}
	require.Empty(t, skipped["AGENTS.md"], "a symlink to another Markdown file of the project is read")
	require.Contains(t, skipped["a/AGENTS.md"], "hidden from commands")
	require.Contains(t, skipped["b/AGENTS.md"], "hidden from commands")
	require.Contains(t, skipped["c/AGENTS.md"], "hidden from commands")

	// Not hidden, but not Markdown either: not followed.
	in.Hidden = nil
	got, err = in.ReadInstructions(context.Background(), []string{"b"})
	require.NoError(t, err)
	for _, f := range got {
		require.NotContains(t, string(f.Text), "SECRET", f.File.Path)
		if f.File.Path == "b/AGENTS.md" {
			require.Contains(t, f.File.Skipped, "not Markdown")
		}
	}
}
