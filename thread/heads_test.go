package thread_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// A thread appended to often gets an in-memory filter of its causes
// (after a few appends, again when it fills). Through every stage, and
// across a reopening, a cause already used is refused, whether it was used
// before the filter was built, after, or before the store was reopened.
func TestDuplicateCausesOfAHotThread(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	draft := func(cause string) facts.Draft {
		d, err := facts.NewDraft(facts.KindUserMessage, cause, facts.UserMessage{Text: cause})
		require.NoError(t, err)
		return d
	}
	var head uint64
	var used []string
	appendNew := func(cause string) {
		h, err := s.Append(ctx, "t", head, draft(cause))
		require.NoError(t, err, cause)
		head = h.Seq
		used = append(used, cause)
	}
	refused := func(cause string) {
		t.Helper()
		_, err := s.Append(ctx, "t", head, draft(cause))
		var dup *thread.DuplicateCauseError
		require.True(t, errors.As(err, &dup), "%s: %v", cause, err)
		require.ErrorIs(t, err, thread.ErrDuplicateCause)
	}
	// 3000 appends: the filter is built after a few, and filled and
	// built again (it starts with room for 1024 more).
	for i := range 3000 {
		appendNew(fmt.Sprintf("step/%d", i))
		if i%97 == 0 {
			for _, old := range []string{used[0], used[i/2], used[i]} {
				refused(old)
			}
		}
	}
	for _, c := range used {
		refused(c)
	}
	// Two drafts of one append may share a cause; one new and one used
	// cause in one append is refused whole.
	_, err := s.Append(ctx, "t", head, draft("fresh"), draft(used[5]))
	require.ErrorIs(t, err, thread.ErrDuplicateCause)
	h, err := s.Append(ctx, "t", head, draft("pair"), draft("pair"))
	require.NoError(t, err)
	head = h.Seq
	refused("pair")

	require.NoError(t, s.Close())
	s = openStore(t, dir)
	defer s.Close()
	for i := range 20 {
		appendNew(fmt.Sprintf("after-reopen/%d", i))
	}
	for _, c := range []string{used[0], used[2999], "pair", "after-reopen/3"} {
		refused(c)
	}
	require.NoError(t, s.Verify(ctx, "t"))
}
