package drive_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
)

// A prompt is the arguments joined, or stdin for "-" (bounded, its
// trailing line feeds dropped); an empty one, or one over the bound, is
// ErrBadPrompt.
func TestReadPrompt(t *testing.T) {
	p, err := drive.ReadPrompt([]string{"Fix", "the tests"}, nil)
	require.NoError(t, err)
	require.Equal(t, "Fix the tests", p)
	p, err = drive.ReadPrompt([]string{"-"}, strings.NewReader("line one\nline two\n\n"))
	require.NoError(t, err)
	require.Equal(t, "line one\nline two", p)
	for _, c := range []struct {
		args []string
		in   string
		want string
	}{
		{[]string{" ", ""}, "", "the prompt is empty"},
		{[]string{"-"}, " \n\t", "the prompt on stdin is empty"},
		{[]string{"-"}, strings.Repeat("x", drive.MaxPrompt+1), "over 1 MiB"},
	} {
		_, err := drive.ReadPrompt(c.args, strings.NewReader(c.in))
		require.ErrorIs(t, err, drive.ErrBadPrompt)
		require.ErrorContains(t, err, c.want)
	}
}

// The same message at the same point has one key; another message, or
// another point, another.
func TestMessageKey(t *testing.T) {
	k := drive.MessageKey(4, "Also the docs")
	require.Equal(t, k, drive.MessageKey(4, "Also the docs"))
	require.NotEqual(t, k, drive.MessageKey(5, "Also the docs"))
	require.NotEqual(t, k, drive.MessageKey(4, "Also the docs."))
	require.Regexp(t, `^message-4-[0-9a-f]{12}$`, k)
}

// An output schema file is read whole up to its bound.
func TestReadOutputSchema(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(small, []byte(`{"type":"object"}`), 0o644))
	b, err := drive.ReadOutputSchema(small)
	require.NoError(t, err)
	require.Equal(t, `{"type":"object"}`, string(b))
	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, make([]byte, drive.MaxOutputSchema+1), 0o644))
	_, err = drive.ReadOutputSchema(big)
	require.ErrorContains(t, err, "over 1 MiB")
	_, err = drive.ReadOutputSchema(filepath.Join(dir, "missing.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
