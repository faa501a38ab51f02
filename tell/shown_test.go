package tell_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tell"
)

// A fact is shown as its line; an action's completion with the tail of
// what its command printed, escaped. Off a terminal nothing is live, and
// there is no progress to show.
func TestLiveShowsFacts(t *testing.T) {
	var w syncBuilder
	l := tell.NewLive(&w, false)
	require.Nil(t, l.Progress(nil))
	l.Fact(fact(t, 3, facts.KindActionStarted, facts.ActionStarted{ActionID: "1-a"}), "line 3")
	done := fact(t, 4, facts.KindActionCompleted, facts.ActionCompleted{ActionID: "1-a", EffectState: facts.EffectObserved,
		Report: facts.Report{Status: "succeeded", Transcript: "$ make", Stdout: "ok\x1b[2J\n"}})
	l.Fact(done, "line 4")
	out := w.String()
	require.True(t, strings.HasPrefix(out, "line 3\nline 4\n"), out)
	require.NotContains(t, out, "\x1b[2J")
	require.Contains(t, out, `ok\x1b[2J`)
}

// On a terminal, progress shows a command's output live and the model's
// text as it streams, and an MCP server's question, asked by no one here.
func TestLiveProgress(t *testing.T) {
	var w syncBuilder
	l := tell.NewLive(&w, true)
	p := l.Progress(nil)
	require.NotNil(t, p)
	p(drive.Event{Kind: drive.EventTurnStarted, Turn: 1})
	p(drive.Event{Kind: drive.EventText, Text: "thinking\x07"})
	l.Start("running 1-a")
	p(drive.Event{Kind: drive.EventOutput, Stream: "stdout", Text: "building\n"})
	require.Eventually(t, func() bool { return strings.Contains(w.String(), "│ building") }, 30*time.Second, 10*time.Millisecond)
	l.Stop()
	require.Contains(t, w.String(), "thinking")
	require.NotContains(t, w.String(), "\x07")
}

func TestWaiting(t *testing.T) {
	require.Equal(t, "[yellow:waiting] 1.5s: boom\\x1b", tell.Waiting(brackets, 1537*time.Millisecond, errors.New("boom\x1b")))
	require.Equal(t, "waiting 12ms: boom", tell.Waiting(nil, 12345*time.Microsecond, errors.New("boom")))
}

// A retry and an action in doubt are said escaped, one line each.
func TestRetryingAndInDoubt(t *testing.T) {
	st := drive.State{Reason: "model: rate limited\x1b[2J", InDoubt: []string{"1-a\n", "2-b"}}
	require.NotContains(t, tell.Retrying(brackets, st), "\x1b")
	require.True(t, strings.HasPrefix(tell.Retrying(brackets, st), "[yellow:retry:] "))
	lines := tell.InDoubt(brackets, st)
	require.Len(t, lines, 2)
	require.Contains(t, lines[0], `action 1-a\n was in progress`)
	require.Empty(t, tell.InDoubt(nil, drive.State{}))
}
