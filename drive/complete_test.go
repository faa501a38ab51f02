package drive_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
)

// Completions keep the rows' order, match by prefix, and say what each
// names on one escaped line, cut: a title or arguments the model wrote
// cannot move the shell's cursor or add a line to its menu.
func TestCompletions(t *testing.T) {
	hostile := "fix\x1b[2J it\nnow\r\t" + strings.Repeat("x", 100)
	rows := []drive.State{
		{Thread: "t2", Status: harness.StatusParked, Title: hostile},
		{Thread: "a1", Status: harness.StatusDone, Title: "other"},
		{Thread: "t1", Status: harness.StatusDone, Title: "first  one"},
	}
	cs := drive.ThreadCompletions(rows, "t")
	require.Len(t, cs, 2)
	require.Equal(t, drive.Completion{Value: "t1", About: "done: first one"}, cs[1])
	require.Equal(t, "t2", cs[0].Value)
	require.True(t, strings.HasPrefix(cs[0].About, "parked: fix"), cs[0].About)
	for _, c := range cs {
		require.NotContains(t, c.About, "\x1b")
		require.NotContains(t, c.About, "\n")
		require.NotContains(t, c.About, "\r")
		require.LessOrEqual(t, len([]rune(c.About)), len("parked: ")+61, c.About)
	}
	require.Empty(t, drive.ThreadCompletions(rows, "z"))
	require.Len(t, drive.ThreadCompletions(rows, ""), 3)

	st := drive.State{Thread: "t1", Waits: []drive.Pending{
		{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-c1"}, Tool: "run_command", Args: `{"command":"rm -rf /` + "\x1b[1A" + `"}`},
		{Wait: fold.Wait{Kind: fold.WaitQuestion, RequestID: "q1"}},
		{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-w", Thread: "t1.1-d1"}, Tool: "write_file", Args: `{}`},
	}}
	rs := drive.RequestCompletions(st, fold.WaitConfirmation, "")
	require.Len(t, rs, 2, "the question is another kind")
	require.Equal(t, "1-c1", rs[0].Value)
	require.NotContains(t, rs[0].About, "\x1b")
	require.True(t, strings.HasPrefix(rs[0].About, "run_command "), rs[0].About)
	require.Equal(t, drive.Completion{Value: "t1.1-d1/1-w", About: "write_file {}"}, rs[1], "a child's request by its ref")
	require.Equal(t, []drive.Completion{rs[1]}, drive.RequestCompletions(st, fold.WaitConfirmation, "t1.1"))
}
