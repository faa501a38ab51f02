package tell_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tell"
	"github.com/seed-7cc7a084/harness/thread"
)

// What a post finds in the log already is said with its seq: an answer
// as one, escaped; a seq it cannot read as the seq alone.
func TestGiven(t *testing.T) {
	ctx := context.Background()
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	defer store.Close()
	msg, err := facts.NewDraft(facts.KindUserMessage, "ingress/m", facts.UserMessage{Text: "hi"})
	require.NoError(t, err)
	ans, err := facts.NewDraft(facts.KindConfirmationAnswered, "ingress/a", facts.ConfirmationAnswered{RequestID: "1-c\x1b[2J", Approved: true, By: "ana"})
	require.NoError(t, err)
	_, err = store.Append(ctx, "t1", 0, msg, ans)
	require.NoError(t, err)
	said := tell.Given(ctx, store, "t1", 2)
	require.Contains(t, said, "already answered: ")
	require.Contains(t, said, "(seq 2); nothing appended")
	require.NotContains(t, said, "\x1b")
	require.Contains(t, tell.Given(ctx, store, "t1", 1), "already posted: ")
	require.Equal(t, "already posted: seq 9; nothing appended", tell.Given(ctx, store, "t1", 9))
}

func TestANSIAndTerminal(t *testing.T) {
	require.Equal(t, "\x1b[33mwait\x1b[0m", tell.ANSI("yellow", "wait"))
	f, err := os.CreateTemp(t.TempDir(), "x")
	require.NoError(t, err)
	defer f.Close()
	require.False(t, tell.IsTerminal(f), "a file is no terminal")
	require.False(t, tell.IsTerminal("stdout"), "nor anything but a file")
}
