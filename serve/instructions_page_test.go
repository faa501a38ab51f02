package serve_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
)

// The page shows which instruction files (AGENTS.md) a thread's turn was
// given, as recorded, and the API's state names them: their path, size
// and digest. What the file says is data: the page escapes its name.
func TestPageShowsInstructions(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	text := "Keep TTLs short.\n"
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "AGENTS.md"), []byte(text), 0o644))
	f.start("t1")

	d := f.detail("t1")
	require.Len(t, d.Instructions, 1, "%+v", d.Instructions)
	in := d.Instructions[0]
	require.Equal(t, "AGENTS.md", filepath.Base(in.Path))
	require.Equal(t, int64(len(text)), int64(in.Size))
	require.NotEmpty(t, in.Digest)

	_, get := f.browser(t)
	page := get("/t/t1?token=" + token)
	require.Contains(t, page, "instructions: project &#34;AGENTS.md&#34; (17 bytes, ", "the page:\n%s", pageLines(page, "instructions"))
}

// pageLines are the lines of page that hold s, for a failure's message.
func pageLines(page, s string) string {
	var out []string
	for _, l := range strings.Split(page, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
