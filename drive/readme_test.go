package drive_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's "Compose your own harness" is under 40 lines, and every
// line of it is a line of Example_compose's file, in order: the code a
// reader copies compiles and runs as the example does.
func TestReadmeCompose(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, sec, ok := strings.Cut(string(readme), "### Compose your own harness\n")
	require.True(t, ok, "the README has the section")
	_, code, ok := strings.Cut(sec, "```go\n")
	require.True(t, ok)
	code, _, ok = strings.Cut(code, "```\n")
	require.True(t, ok)
	lines := strings.Split(strings.TrimRight(code, "\n"), "\n")
	require.Less(t, len(lines), 40, "the section's code")

	src, err := os.ReadFile("example_compose_test.go")
	require.NoError(t, err)
	var have []string
	for _, l := range strings.Split(string(src), "\n") {
		have = append(have, strings.TrimSpace(l))
	}
	at := 0
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		for at < len(have) && have[at] != l {
			at++
		}
		require.Less(t, at, len(have), "README line not in example_compose_test.go (in order): %s", l)
		at++
	}
}
