package harness_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// parkedOn starts thread t of a fresh env on script and returns the
// request it waits on.
func parkedOn(t *testing.T, script string) (*env, string) {
	t.Helper()
	e := newEnv(t, script)
	out, err := e.rt.Start(ctx, e.actor, "t", "Set the cache TTL to 300")
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

func (e *env) head(id string) uint64 {
	e.t.Helper()
	h, err := e.store.Head(ctx, id)
	require.NoError(e.t, err)
	return h.Seq
}

func TestPostAnswerSameKeyTwice(t *testing.T) {
	e, req := parkedOn(t, toolScript)
	yes := confirm(t, req, true, "ana")
	key := harness.AnswerKey(yes.Kind, req)

	p, err := e.rt.PostAnswer(ctx, e.actor, "t", yes, key)
	require.NoError(t, err)
	require.False(t, p.Duplicate)
	head := e.head("t")
	require.Equal(t, head, p.Seq)

	again, err := e.rt.PostAnswer(ctx, e.actor, "t", yes, key)
	require.NoError(t, err)
	require.Equal(t, harness.Posted{Seq: p.Seq, Duplicate: true}, again)
	require.Equal(t, head, e.head("t"), "nothing appended")

	// Still harmless once the thread has moved on.
	out, err := e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	again, err = e.rt.PostAnswer(ctx, e.actor, "t", yes, key)
	require.NoError(t, err)
	require.Equal(t, harness.Posted{Seq: p.Seq, Duplicate: true}, again)
	require.Equal(t, out.Seq, e.head("t"))
}

func TestPostAnswerSameAnswerAnotherKey(t *testing.T) {
	e, req := parkedOn(t, toolScript)
	p, err := e.rt.PostAnswer(ctx, e.actor, "t", confirm(t, req, true, "ana"), "k1")
	require.NoError(t, err)
	head := e.head("t")

	// Who answers does not change the answer.
	again, err := e.rt.PostAnswer(ctx, e.actor, "t", confirm(t, req, true, "bo"), "k2")
	require.NoError(t, err)
	require.Equal(t, harness.Posted{Seq: p.Seq, Duplicate: true}, again, "the first answer's seq")
	require.Equal(t, head, e.head("t"))
}

func TestPostAnswerDiffers(t *testing.T) {
	e, req := parkedOn(t, toolScript)
	p, err := e.rt.PostAnswer(ctx, e.actor, "t", confirm(t, req, false, "ana"), harness.AnswerKey(facts.KindConfirmationAnswered, req))
	require.NoError(t, err)
	head := e.head("t")

	t.Run("another key", func(t *testing.T) {
		_, err := e.rt.PostAnswer(ctx, e.actor, "t", confirm(t, req, true, "ana"), "k2")
		require.ErrorIs(t, err, harness.ErrAnswerDiffers)
		require.ErrorIs(t, err, scheduler.ErrAnswered, "the refusal stays in the chain")
		require.EqualError(t, err, fmt.Sprintf("already answered at seq %d (%s denied by ana); nothing appended", p.Seq, req))
		require.Equal(t, head, e.head("t"), "nothing appended")
	})
	t.Run("the same key", func(t *testing.T) {
		_, err := e.rt.PostAnswer(ctx, e.actor, "t", confirm(t, req, true, "ana"), harness.AnswerKey(facts.KindConfirmationAnswered, req))
		require.ErrorIs(t, err, harness.ErrAnswerDiffers)
		require.ErrorContains(t, err, fmt.Sprintf(`key "confirm-%s" was already used at seq %d for another answer (%s denied by ana`, req, p.Seq, req))
		require.Equal(t, head, e.head("t"), "nothing appended")
	})
}

func TestPostAnswerUnknownRequest(t *testing.T) {
	e, _ := parkedOn(t, toolScript)
	head := e.head("t")
	_, err := e.rt.PostAnswer(ctx, e.actor, "t", confirm(t, "nope", true, "ana"), "k1")
	require.ErrorIs(t, err, scheduler.ErrUnknownRequest)
	require.ErrorIs(t, err, fold.ErrRefused)
	require.NotErrorIs(t, err, harness.ErrAnswerDiffers)
	require.Equal(t, head, e.head("t"))
}

func TestPostAnswerQuestion(t *testing.T) {
	e, req := parkedOn(t, questionScript)
	answer := func(text string) facts.Draft {
		return draft(t, facts.KindQuestionAnswered, facts.QuestionAnswered{RequestID: req, Text: text, By: "ana"})
	}
	p, err := e.rt.PostAnswer(ctx, e.actor, "t", answer("cache.toml"), "q1")
	require.NoError(t, err)
	out, err := e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)

	again, err := e.rt.PostAnswer(ctx, e.actor, "t", answer("cache.toml"), "q2")
	require.NoError(t, err)
	require.Equal(t, harness.Posted{Seq: p.Seq, Duplicate: true}, again)
	_, err = e.rt.PostAnswer(ctx, e.actor, "t", answer("other.toml"), "q3")
	require.ErrorIs(t, err, harness.ErrAnswerDiffers)
	require.Equal(t, out.Seq, e.head("t"))
}

func TestPostAnswerMessage(t *testing.T) {
	e, _ := parkedOn(t, toolScript)
	msg := func(text string) facts.Draft {
		return draft(t, facts.KindUserMessage, facts.UserMessage{Text: text})
	}
	p, err := e.rt.PostAnswer(ctx, e.actor, "t", msg("Also update the docs"), "docs-1")
	require.NoError(t, err)
	again, err := e.rt.PostAnswer(ctx, e.actor, "t", msg("Also update the docs"), "docs-1")
	require.NoError(t, err)
	require.Equal(t, harness.Posted{Seq: p.Seq, Duplicate: true}, again)
	_, err = e.rt.PostAnswer(ctx, e.actor, "t", msg("Never mind"), "docs-1")
	require.ErrorIs(t, err, harness.ErrAnswerDiffers, "a key names one fact")

	// A message answers no request: under a new key it is a new message.
	next, err := e.rt.PostAnswer(ctx, e.actor, "t", msg("Also update the docs"), "docs-2")
	require.NoError(t, err)
	require.False(t, next.Duplicate)
	require.Equal(t, p.Seq+1, next.Seq)
}

func TestLastAnswer(t *testing.T) {
	e, req := parkedOn(t, toolScript)
	_, ok, err := harness.LastAnswer(ctx, e.store, "t", facts.KindConfirmationAnswered)
	require.NoError(t, err)
	require.False(t, ok, "nothing answered yet")

	yes := confirm(t, req, true, "ana")
	p, err := e.rt.PostAnswer(ctx, e.actor, "t", yes, "k1")
	require.NoError(t, err)
	out, err := e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Greater(t, out.Seq, p.Seq)

	f, ok, err := harness.LastAnswer(ctx, e.store, "t", facts.KindConfirmationAnswered)
	require.NoError(t, err)
	require.True(t, ok, "what the runtime appended since does not count")
	require.Equal(t, p.Seq, f.Seq)
	require.Equal(t, req, harness.AnsweredRequest(f))
	require.True(t, harness.SameAnswer(f, confirm(t, req, true, "bo")))
	require.False(t, harness.SameAnswer(f, confirm(t, req, false, "ana")))
	require.False(t, harness.SameAnswer(f, confirm(t, "other", true, "ana")))

	_, err = e.rt.PostAnswer(ctx, e.actor, "t", draft(t, facts.KindUserMessage, facts.UserMessage{Text: "Thanks"}), "m1")
	require.NoError(t, err)
	_, ok, err = harness.LastAnswer(ctx, e.store, "t", facts.KindConfirmationAnswered)
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
	fmt.Println(harness.AnsweredRequest(given), harness.SameAnswer(given, again), harness.SameAnswer(given, no))
	// Output: 1-call_1 true false
}
