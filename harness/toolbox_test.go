package harness_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
)

func inlineTool(name string) harness.Tool {
	return harness.Tool{Spec: facts.ToolSchema{Name: name}, Needs: action.Read,
		Run: func(context.Context, json.RawMessage) (facts.Report, error) {
			return facts.Report{Status: facts.StatusSucceeded}, nil
		}}
}

// With adds tools after a toolbox's own, in order, and leaves the
// toolbox as it was; a name taken twice is refused.
func TestToolboxWith(t *testing.T) {
	base, err := harness.NewToolbox(inlineTool("a"))
	require.NoError(t, err)
	more, err := base.With(inlineTool("b"), inlineTool("c"))
	require.NoError(t, err)
	var names []string
	for _, s := range more.Schemas() {
		names = append(names, s.Name)
	}
	require.Equal(t, []string{"a", "b", "c"}, names)
	require.Len(t, base.Schemas(), 1, "the toolbox it came from is unchanged")

	_, err = base.With(inlineTool("a"))
	require.ErrorContains(t, err, `two tools named "a"`)
	_, err = base.With(harness.Tool{Spec: facts.ToolSchema{Name: "bad"}, Needs: "launch"})
	require.Error(t, err)

	var none *harness.Toolbox
	one, err := none.With(inlineTool("x"))
	require.NoError(t, err)
	_, ok := one.Lookup("x")
	require.True(t, ok)
}
