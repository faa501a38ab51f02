package harness

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// The directories whose instruction files a turn reads are decided from
// the paths the log's calls named: inside the workspace only, never in a
// .git or .harness, parents first, and at most maxTouched of them however
// many a hostile model names.
func TestTouchedDirectories(t *testing.T) {
	var in instructions
	turn := func(paths ...string) {
		mt := facts.ModelTurn{Turn: 1}
		for i, p := range paths {
			args := fmt.Sprintf(`{"path":%q}`, p)
			mt.ToolCalls = append(mt.ToolCalls, facts.ToolCall{ID: fmt.Sprint(i), Name: "read_file", Args: args})
		}
		d, err := facts.NewDraft(facts.KindModelTurn, "infer/turn/1", mt)
		require.NoError(t, err)
		in.step(facts.Fact{Thread: "t1", Seq: 1, Kind: d.Kind, Cause: d.Cause, Data: d.Data})
	}
	turn("pkg/cache/x.go", "../etc/passwd", "/etc/passwd", ".git/config", "a/.harness/db", "pkg-b/y.go", "./pkg/../docs/z.md", ".")
	require.Equal(t, []string{"a", "docs", "docs/z.md", "pkg", "pkg/cache", "pkg/cache/x.go", "pkg-b", "pkg-b/y.go"}, in.touched)

	many := make([]string, 200)
	for i := range many {
		many[i] = fmt.Sprintf("d%03d/f.go", i)
	}
	turn(many...)
	require.Len(t, in.touched, maxTouched)

	// The snapshot keeps them, and what was recorded last.
	in.latest = facts.InstructionsRead{Turn: 2, Files: []facts.InstructionFile{{Scope: facts.InstructionsProject, Path: "AGENTS.md", Digest: "ab", Size: 2}}}
	in.seq = 7
	var e fold.Encoder
	require.NoError(t, in.snapshot(&e))
	var back instructions
	d := fold.NewDecoder("t1", e.Data())
	back.restore(d)
	require.NoError(t, d.Finish())
	require.Equal(t, in.view(), back.view())
}
