package tell_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/demo"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/tell"
)

// The demo narrated end to end: its five steps in order, the pending
// request shown through Pending with the command that approves it, the
// workers' table and a replay that verifies.
func TestDemoNarrates(t *testing.T) {
	var b bytes.Buffer
	var shown []string
	n := &tell.Demo{W: &b, Paint: brackets,
		Pending: func(p drive.Pending, root string) { shown = append(shown, p.RequestID) },
		Approve: func(id, req string) string { return "approve " + id + " " + req },
		Verify:  "verify " + demo.Thread}
	_, err := demo.Run(context.Background(), demo.Options{Dir: t.TempDir()}, n)
	require.NoError(t, err)
	out := b.String()
	last := 0
	for _, step := range []string{"[bold:harness demo]", "[bold:== 1. A thread asks", "[bold:== 2. Parked", "on the command line: approve demo " + shown[0],
		"[bold:== 3. You approve", "What the record says of the write:", "observation (what the runtime saw)",
		"[bold:== 4. Four workers", "WORKER", "Every worker said it succeeded", "[bold:== 5. verify demo]"} {
		i := strings.Index(out[last:], step)
		require.GreaterOrEqual(t, i, 0, "%q after byte %d of:\n%s", step, last, out)
		last += i
	}
	require.Len(t, shown, 1)
	require.NotContains(t, out, "this is a bug")
}
