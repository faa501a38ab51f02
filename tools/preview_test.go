package tools_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/tools"
)

func TestPreview(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "cache.toml"), []byte("ttl_seconds = 60\nsize = 10\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "was-empty.txt"), nil, 0o644))
	cases := []struct {
		name, tool, args, want string
	}{
		{"write_file", "write_file", `{"path":"cache.toml","content":"ttl_seconds = 300\nsize = 10\n"}`,
			"--- a/cache.toml\n+++ b/cache.toml\n@@ -1,2 +1,2 @@\n-ttl_seconds = 60\n+ttl_seconds = 300\n size = 10\n"},
		{"write_file, a new file", "write_file", `{"path":"new.txt","content":"hi\n"}`, "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n"},
		{"edit_file", "edit_file", `{"path":"cache.toml","old":"size = 10","new":"size = 20"}`,
			"--- a/cache.toml\n+++ b/cache.toml\n@@ -1,2 +1,2 @@\n ttl_seconds = 60\n-size = 10\n+size = 20\n"},
		{"an edit that does not apply", "edit_file", `{"path":"cache.toml","old":"nope","new":"x"}`, "(the edit does not apply: the old text is not in cache.toml)"},
		{"no change", "write_file", `{"path":"cache.toml","content":"ttl_seconds = 60\nsize = 10\n"}`, "(no change: cache.toml already holds this content)"},
		{"an empty file written empty is no change", "write_file", `{"path":"was-empty.txt","content":""}`, "(no change: was-empty.txt already holds this content)"},
		{"an empty new file is made, not no change", "write_file", `{"path":"empty.txt","content":""}`, "(creates empty.txt, empty)"},
		{"a path outside the workspace", "write_file", `{"path":"../x","content":"x"}`, ""},
		{"a command has no preview", "run_command", `{"command":"ls"}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tools.Preview(root, tc.tool, tc.args)
			if tc.name == "a path outside the workspace" {
				require.Contains(t, got, "no preview")
				return
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// A file's content or a call's new content cannot hide a line of the
// diff: control characters other than tab are shown escaped.
func TestPreviewEscapesControlCharacters(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "x.txt"), []byte("\x1b[31mred\x1b[0m\n\tkept\n"), 0o644))
	got := tools.Preview(root, "write_file", `{"path":"x.txt","content":"ok\n\u001b[2K\rhidden\u202e\n\tkept\n"}`)
	require.Equal(t, "--- a/x.txt\n+++ b/x.txt\n@@ -1,2 +1,3 @@\n-\\x1b[31mred\\x1b[0m\n+ok\n+\\x1b[2K\\rhidden\\u202e\n \tkept\n", got)
	got = tools.Preview(root, "write_file", `{"path":"new\r\u001b[2K.txt","content":"a\n"}`)
	require.Equal(t, "--- /dev/null\n+++ b/new\\r\\x1b[2K.txt\n@@ -0,0 +1 @@\n+a\n", got)
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext":      "plain\ttext",
		"a\nb":             `a\nb`,
		"\x1b[2K\rx":       `\x1b[2K\rx`,
		"del\x7f":          `del\x7f`,
		"c1\u009b":         `c1\x9b`,
		"bidi\u202eevil":   `bidi\u202eevil`,
		"bad\xffutf8":      `bad\xffutf8`,
		"ünïcode — fine ✓": "ünïcode — fine ✓",
	} {
		require.Equal(t, want, present.EscapeLine(in), "%q", in)
	}
	require.Equal(t, "a\n\\x1bb\n", present.EscapeText("a\n\x1bb\n"))
}
