package drive_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// Threads are listed the one active last first, ties by id with numbers
// as numbers.
func TestActiveFirst(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st := func(id string, later time.Duration) drive.State {
		var s drive.State
		s.Thread, s.Head.At = id, at.Add(later)
		return s
	}
	rows := []drive.State{st("t10", 0), st("t2", 0), st("a", 0), st("t1", 0), st("t9", time.Minute), st("t2x", 0)}
	drive.ActiveFirst(rows)
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.Thread)
	}
	require.Equal(t, []string{"t9", "a", "t1", "t2", "t2x", "t10"}, ids)
}

// The thread active last is the one whose last fact is the latest; a
// store with none says so.
func TestLastActive(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, err := thread.OpenPebble(filepath.Join(t.TempDir(), "db"), thread.WithClock(func() time.Time { return now }))
	require.NoError(t, err)
	defer s.Close()
	_, err = drive.LastActive(ctx, s)
	require.ErrorIs(t, err, drive.ErrNoThreads)
	for i, id := range []string{"t2", "t10", "t1"} {
		now = now.Add(time.Minute)
		d, err := facts.NewDraft(facts.KindUserMessage, fmt.Sprintf("ingress/%d", i), facts.UserMessage{Text: "hi"})
		require.NoError(t, err)
		_, err = s.Append(ctx, id, 0, d)
		require.NoError(t, err)
	}
	id, err := drive.LastActive(ctx, s)
	require.NoError(t, err)
	require.Equal(t, "t1", id)
}
