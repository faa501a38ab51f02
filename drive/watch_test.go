package drive_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// pendingOf is the open request of thread t, as a front end shows it.
func pendingOf(t *testing.T, e *harnesstest.Env) drive.Pending {
	t.Helper()
	st, err := drive.Inspect(ctx, e.Thread("t"))
	require.NoError(t, err)
	require.Len(t, st.Waits, 1)
	return st.Waits[0]
}

// elsewhere waits for the watch's context to end and returns its cause.
func elsewhere(t *testing.T, watched context.Context) *drive.Elsewhere {
	t.Helper()
	select {
	case <-watched.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("the watch never saw the answer")
	}
	e, ok := drive.IsElsewhere(context.Cause(watched))
	require.True(t, ok, "cause: %v", context.Cause(watched))
	return e
}

// An answer posted by someone else (another Thread, as another process
// posts it) while a person is asked ends the watch: its cause names the
// answer and who gave it.
func TestWatchAnswerSeesAnAnswerGivenElsewhere(t *testing.T) {
	e, req := parkedOn(t, harnesstest.ToolScript)
	th := e.Thread("t")
	p := pendingOf(t, e)
	watched, done, err := drive.WatchAnswer(ctx, th, p, nil)
	require.NoError(t, err)
	require.NoError(t, watched.Err(), "the request is open: the watch waits")
	_, err = e.Thread("t").Post(ctx, confirm(t, req, true, "bob"), "page")
	require.NoError(t, err)
	got := elsewhere(t, watched)
	require.Equal(t, req+" approved by bob", got.Said)
	require.Equal(t, facts.KindConfirmationAnswered, got.Fact.Kind)
	require.Same(t, got, done())
}

// An answer given before the watch began (between the look that found
// the request and the prompt) is seen at once.
func TestWatchAnswerSeesAnAnswerAlreadyGiven(t *testing.T) {
	e, req := parkedOn(t, harnesstest.ToolScript)
	p := pendingOf(t, e)
	_, err := e.Thread("t").Post(ctx, confirm(t, req, false, "bob"), "page")
	require.NoError(t, err)
	watched, done, err := drive.WatchAnswer(ctx, e.Thread("t"), p, nil)
	require.NoError(t, err)
	require.Equal(t, req+" denied by bob", elsewhere(t, watched).Said)
	require.NotNil(t, done())
}

// A stop of the thread ends the wait too; a watch ended before anything
// happened reports nothing and leaves no goroutine behind.
func TestWatchAnswerSeesAStop(t *testing.T) {
	e, _ := parkedOn(t, harnesstest.ToolScript)
	p := pendingOf(t, e)
	watched, done, err := drive.WatchAnswer(ctx, e.Thread("t"), p, nil)
	require.NoError(t, err)
	_, err = e.Thread("t").Stop(ctx, "bob", "not <now>")
	require.NoError(t, err)
	require.Equal(t, "stopped by bob: not <now>", elsewhere(t, watched).Said)
	done()

	e2, _ := parkedOn(t, harnesstest.ToolScript)
	watched, done, err = drive.WatchAnswer(ctx, e2.Thread("t"), pendingOf(t, e2), nil)
	require.NoError(t, err)
	require.Nil(t, done())
	require.Error(t, watched.Err(), "done ends the watch's context")
}
