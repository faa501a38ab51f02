package serve

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
)

// TestRemoteProgress: what another process hands over reaches the
// thread's streams and the replay of a stream opened later — but not an
// event of another thread, a question, or what is not an event; a drive
// that ended (its lease let go) leaves nothing kept; the events the other
// process dropped are counted in every stream.
func TestRemoteProgress(t *testing.T) {
	h := newLiveHub()
	r := remoteProgress{h}
	enc := func(e drive.Event) []byte {
		b, err := drive.EncodeEvent(e)
		require.NoError(t, err)
		return b
	}
	f, unfollow := h.follow("t1")
	defer unfollow()
	r.Progress("t1", enc(drive.Event{Kind: drive.EventOutput, Thread: "t1", ActionID: "a1", Stream: "stdout", Text: "one\n"}), 0)
	r.Progress("t1", enc(drive.Event{Kind: drive.EventOutput, Thread: "t2", ActionID: "a1", Stream: "stdout", Text: "not t1's\n"}), 0)
	r.Progress("t1", enc(drive.Event{Kind: drive.EventAsked, Thread: "t1", ActionID: "a1", Request: "q1", Text: "a question"}), 0)
	r.Progress("t1", enc(drive.Event{Kind: drive.EventOutput, Thread: "t1", ActionID: "a1", Stream: "/dev/tty", Text: "x"}), 0)
	r.Progress("t1", []byte(`{"event":"output","thread":"t1","action_id":"a1","stream":"stdout","text":"x","extra":1}`), 0)
	r.Progress("t1", []byte(`not json`), 0)
	r.Progress("t1", enc(drive.Event{Kind: drive.EventOutput, Thread: "t1", ActionID: "a1", Stream: "stderr", Text: "two\n"}), 3)

	events, dropped := f.take()
	require.Len(t, events, 2)
	require.Equal(t, "one\n", events[0].Text)
	require.Equal(t, "two\n", events[1].Text)
	require.Equal(t, 3, dropped)

	late, unfollowLate := h.follow("t1")
	events, _ = late.take()
	unfollowLate()
	require.Len(t, events, 2, "a stream opened later starts with the output so far")

	r.Ended("t1")
	after, unfollowAfter := h.follow("t1")
	defer unfollowAfter()
	events, _ = after.take()
	require.Empty(t, events, "a drive that ended leaves nothing kept")
}
