package drive_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// parkedOn starts thread t of a fresh env on script and returns the
// request it waits on.
func parkedOn(t *testing.T, script string) (*harnesstest.Env, string) {
	t.Helper()
	e := harnesstest.New(t, script)
	out, err := e.RT.Start(ctx, e.Actor, "t", "Set the cache TTL to 300")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Len(t, out.Waits, 1)
	return e, out.Waits[0].RequestID
}

func draft(t *testing.T, kind facts.Kind, payload any) facts.Draft {
	t.Helper()
	d, err := facts.NewDraft(kind, "", payload)
	require.NoError(t, err)
	return d
}

func confirm(t *testing.T, request string, approved bool, by string) facts.Draft {
	t.Helper()
	return draft(t, facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: request, Approved: approved, By: by})
}

func head(e *harnesstest.Env, id string) uint64 {
	e.T.Helper()
	h, err := e.Store.Head(ctx, id)
	require.NoError(e.T, err)
	return h.Seq
}

func TestPostAnswerSameKeyTwice(t *testing.T) {
	e, req := parkedOn(t, harnesstest.ToolScript)
	yes := confirm(t, req, true, "ana")
	key := drive.AnswerKey(yes.Kind, req)

	p, err := drive.PostAnswer(ctx, e.Thread("t"), yes, key)
	require.NoError(t, err)
	require.False(t, p.Duplicate)
	seq := head(e, "t")
	require.Equal(t, seq, p.Seq)

	again, err := drive.PostAnswer(ctx, e.Thread("t"), yes, key)
	require.NoError(t, err)
	require.Equal(t, harness.Posted{Seq: p.Seq, Duplicate: true}, again)
	require.Equal(t, seq, head(e, "t"), "nothing appended")

	// Still harmless once the thread has moved on.
	out, err := e.RT.Resume(ctx, e.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	again, err = drive.PostAnswer(ctx, e.Thread("t"), yes, key)
	require.NoError(t, err)
	require.Equal(t, harness.Posted{Seq: p.Seq, Duplicate: true}, again)
	require.Equal(t, out.Seq, head(e, "t"))
}

func TestPostAnswerSameAnswerAnotherKey(t *testing.T) {
	e, req := parkedOn(t, harnesstest.ToolScript)
	p, err := drive.PostAnswer(ctx, e.Thread("t"), confirm(t, req, true, "ana"), "k1")
	require.NoError(t, err)
	seq := head(e, "t")

	// Who answers does not change the answer.
	again, err := drive.PostAnswer(ctx, e.Thread("t"), confirm(t, req, true, "bo"), "k2")
	require.NoError(t, err)
	require.Equal(t, harness.Posted{Seq: p.Seq, Duplicate: true}, again, "the first answer's seq")
	require.Equal(t, seq, head(e, "t"))
}

func TestPostAnswerDiffers(t *testing.T) {
	e, req := parkedOn(t, harnesstest.ToolScript)
	p, err := drive.PostAnswer(ctx, e.Thread("t"), confirm(t, req, false, "ana"), drive.AnswerKey(facts.KindConfirmationAnswered, req))
	require.NoError(t, err)
	seq := head(e, "t")

	t.Run("another key", func(t *testing.T) {
		_, err := drive.PostAnswer(ctx, e.Thread("t"), confirm(t, req, true, "ana"), "k2")
		require.ErrorIs(t, err, drive.ErrAnswerDiffers)
		require.ErrorIs(t, err, scheduler.ErrAnswered, "the refusal stays in the chain")
		require.EqualError(t, err, fmt.Sprintf("already answered: %s denied by ana (seq %d); nothing appended", req, p.Seq))
		require.Equal(t, seq, head(e, "t"), "nothing appended")
	})
	t.Run("the same key", func(t *testing.T) {
		_, err := drive.PostAnswer(ctx, e.Thread("t"), confirm(t, req, true, "ana"), drive.AnswerKey(facts.KindConfirmationAnswered, req))
		require.ErrorIs(t, err, drive.ErrAnswerDiffers)
		require.ErrorContains(t, err, fmt.Sprintf(`already answered: %s denied by ana (seq %d)`, req, p.Seq))
		require.Equal(t, seq, head(e, "t"), "nothing appended")
	})
}

func TestPostAnswerUnknownRequest(t *testing.T) {
	e, _ := parkedOn(t, harnesstest.ToolScript)
	seq := head(e, "t")
	_, err := drive.PostAnswer(ctx, e.Thread("t"), confirm(t, "nope", true, "ana"), "k1")
	require.ErrorIs(t, err, scheduler.ErrUnknownRequest)
	require.ErrorIs(t, err, fold.ErrRefused)
	require.NotErrorIs(t, err, drive.ErrAnswerDiffers)
	require.Equal(t, seq, head(e, "t"))
}

func TestPostAnswerQuestion(t *testing.T) {
	e, req := parkedOn(t, harnesstest.QuestionScript)
	answer := func(text string) facts.Draft {
		return draft(t, facts.KindQuestionAnswered, facts.QuestionAnswered{RequestID: req, Text: text, By: "ana"})
	}
	p, err := drive.PostAnswer(ctx, e.Thread("t"), answer("cache.toml"), "q1")
	require.NoError(t, err)
	out, err := e.RT.Resume(ctx, e.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)

	again, err := drive.PostAnswer(ctx, e.Thread("t"), answer("cache.toml"), "q2")
	require.NoError(t, err)
	require.Equal(t, harness.Posted{Seq: p.Seq, Duplicate: true}, again)
	_, err = drive.PostAnswer(ctx, e.Thread("t"), answer("other.toml"), "q3")
	require.ErrorIs(t, err, drive.ErrAnswerDiffers)
	require.Equal(t, out.Seq, head(e, "t"))
}

func TestPostAnswerMessage(t *testing.T) {
	e, _ := parkedOn(t, harnesstest.ToolScript)
	msg := func(text string) facts.Draft {
		return draft(t, facts.KindUserMessage, facts.UserMessage{Text: text})
	}
	p, err := drive.PostAnswer(ctx, e.Thread("t"), msg("Also update the docs"), "docs-1")
	require.NoError(t, err)
	again, err := drive.PostAnswer(ctx, e.Thread("t"), msg("Also update the docs"), "docs-1")
	require.NoError(t, err)
	require.Equal(t, harness.Posted{Seq: p.Seq, Duplicate: true}, again)
	_, err = drive.PostAnswer(ctx, e.Thread("t"), msg("Never mind"), "docs-1")
	require.ErrorIs(t, err, drive.ErrAnswerDiffers, "a key names one fact")

	// A message answers no request: under a new key it is a new message.
	next, err := drive.PostAnswer(ctx, e.Thread("t"), msg("Also update the docs"), "docs-2")
	require.NoError(t, err)
	require.False(t, next.Duplicate)
	require.Equal(t, p.Seq+1, next.Seq)
}

func TestLastAnswer(t *testing.T) {
	e, req := parkedOn(t, harnesstest.ToolScript)
	_, ok, err := drive.LastAnswer(ctx, e.Thread("t"), facts.KindConfirmationAnswered)
	require.NoError(t, err)
	require.False(t, ok, "nothing answered yet")

	yes := confirm(t, req, true, "ana")
	p, err := drive.PostAnswer(ctx, e.Thread("t"), yes, "k1")
	require.NoError(t, err)
	out, err := e.RT.Resume(ctx, e.Actor, "t")
	require.NoError(t, err)
	require.Greater(t, out.Seq, p.Seq)

	f, ok, err := drive.LastAnswer(ctx, e.Thread("t"), facts.KindConfirmationAnswered)
	require.NoError(t, err)
	require.True(t, ok, "what the runtime appended since does not count")
	require.Equal(t, p.Seq, f.Seq)
	require.Equal(t, req, drive.AnsweredRequest(f))
	require.True(t, drive.SameAnswer(f, confirm(t, req, true, "bo")))
	require.False(t, drive.SameAnswer(f, confirm(t, req, false, "ana")))
	require.False(t, drive.SameAnswer(f, confirm(t, "other", true, "ana")))

	_, err = drive.PostAnswer(ctx, e.Thread("t"), draft(t, facts.KindUserMessage, facts.UserMessage{Text: "Thanks"}), "m1")
	require.NoError(t, err)
	_, ok, err = drive.LastAnswer(ctx, e.Thread("t"), facts.KindConfirmationAnswered)
	require.NoError(t, err)
	require.False(t, ok, "something else was posted since")
}

// An answer is the same as another if it answers the same request the same
// way; who gave it, and why, do not count.
func ExampleSameAnswer() {
	yes, _ := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: "1-call_1", Approved: true, By: "ana"})
	given := facts.Fact{Seq: 6, Kind: yes.Kind, Data: yes.Data}

	again, _ := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: "1-call_1", Approved: true, By: "bo", Reason: "looks right"})
	no, _ := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: "1-call_1", Approved: false, By: "ana"})
	fmt.Println(drive.AnsweredRequest(given), drive.SameAnswer(given, again), drive.SameAnswer(given, no))
	// Output: 1-call_1 true false
}
