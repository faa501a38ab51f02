package drive_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// A reply becomes the answer fact of its kind, bound to the call the
// person was shown; one that does not fit its request is refused before
// anything is posted.
func TestReplyDraft(t *testing.T) {
	conf := drive.Pending{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-c"}, Digest: "d1"}
	q := drive.Pending{Wait: fold.Wait{Kind: fold.WaitQuestion, RequestID: "q"}, Options: []string{"a.toml", "2"}}
	rec := drive.Pending{Wait: fold.Wait{Kind: fold.WaitReconcile, RequestID: "1-x"}}
	decode := func(d facts.Draft) any {
		f := facts.Fact{Kind: d.Kind, Data: d.Data}
		switch d.Kind {
		case facts.KindConfirmationAnswered:
			p, err := facts.Decode[facts.ConfirmationAnswered](f)
			require.NoError(t, err)
			return p
		case facts.KindQuestionAnswered:
			p, err := facts.Decode[facts.QuestionAnswered](f)
			require.NoError(t, err)
			return p
		}
		p, err := facts.Decode[facts.EffectReconciled](f)
		require.NoError(t, err)
		return p
	}
	for _, tc := range []struct {
		name string
		r    drive.Reply
		p    drive.Pending
		want any
		bad  bool
	}{
		{"approve takes the shown digest", drive.Reply{Kind: fold.WaitConfirmation, Approved: true, By: "ana"}, conf,
			facts.ConfirmationAnswered{RequestID: "1-c", Approved: true, By: "ana", Digest: "d1"}, false},
		{"approve names its digest", drive.Reply{Kind: fold.WaitConfirmation, Approved: true, By: "ana", Digest: "other"}, conf,
			facts.ConfirmationAnswered{RequestID: "1-c", Approved: true, By: "ana", Digest: "other"}, false},
		{"deny and stop", drive.Reply{Kind: fold.WaitConfirmation, By: "ana", Reason: "no", Then: facts.DenyStop}, conf,
			facts.ConfirmationAnswered{RequestID: "1-c", By: "ana", Reason: "no", Digest: "d1", Then: facts.DenyStop}, false},
		{"an approval records no Then", drive.Reply{Kind: fold.WaitConfirmation, Approved: true, By: "ana", Then: facts.DenyStop}, conf,
			facts.ConfirmationAnswered{RequestID: "1-c", Approved: true, By: "ana", Digest: "d1"}, false},
		{"the Nth option", drive.Reply{Kind: fold.WaitQuestion, Text: "1", Option: 1, By: "bo"}, q,
			facts.QuestionAnswered{RequestID: "q", Text: "a.toml", By: "bo"}, false},
		{"a number that is an option stays", drive.Reply{Kind: fold.WaitQuestion, Text: "2", Option: 2, By: "bo"}, q,
			facts.QuestionAnswered{RequestID: "q", Text: "2", By: "bo"}, false},
		{"no such option: the text", drive.Reply{Kind: fold.WaitQuestion, Text: "7", Option: 7, By: "bo"}, q,
			facts.QuestionAnswered{RequestID: "q", Text: "7", By: "bo"}, false},
		{"settle", drive.Reply{Kind: fold.WaitReconcile, Decision: facts.DecisionAccept, Reason: "checked", By: "cy"}, rec,
			facts.EffectReconciled{ActionID: "1-x", Decision: facts.DecisionAccept, Note: "checked", By: "cy"}, false},
		{"another kind's reply", drive.Reply{Kind: fold.WaitQuestion, Text: "x"}, conf, nil, true},
		{"an empty answer", drive.Reply{Kind: fold.WaitQuestion, Text: "  "}, q, nil, true},
		{"no decision", drive.Reply{Kind: fold.WaitReconcile}, rec, nil, true},
		{"an always-rule not yet added", drive.Reply{Kind: fold.WaitConfirmation, Approved: true, Always: "write_file"}, conf, nil, true},
		{"an unknown decision", drive.Reply{Kind: fold.WaitReconcile, Decision: "shrug"}, rec, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := tc.r.Draft(tc.p)
			if tc.bad {
				require.ErrorIs(t, err, drive.ErrBadReply)
				return
			}
			require.NoError(t, err)
			require.Equal(t, drive.AnswerKind(tc.p.Kind), d.Kind)
			require.Equal(t, tc.want, decode(d))
		})
	}
	for _, r := range []drive.Reply{
		{Kind: "approval"},
		{Kind: fold.WaitConfirmation, Decision: facts.DecisionAccept},
		{Kind: fold.WaitConfirmation, Then: "later"},
		{Kind: fold.WaitQuestion},
		{Kind: fold.WaitReconcile, Decision: "maybe"},
		{Kind: fold.WaitConfirmation, Always: "write_file"},
		{Kind: fold.WaitConfirmation, Approved: true, Always: ":docs/*"},
		{Kind: fold.WaitQuestion, Text: "x", Always: "write_file"},
	} {
		require.ErrorIs(t, r.Check(), drive.ErrBadReply, "%+v", r)
	}
	require.NoError(t, drive.Reply{Kind: fold.WaitConfirmation, Approved: true, Always: "write_file:docs/*"}.Check())
}

// Answer posts a reply to the open request, once: the same reply again
// is a repeat, a contradicting one is refused, and a reply bound to
// another call's digest is refused by the thread.
func TestAnswerReply(t *testing.T) {
	e, req := parkedOn(t, harnesstest.ToolScript)
	th := e.Thread("t")
	_, err := drive.Answer(ctx, th, drive.Reply{Kind: fold.WaitConfirmation, Approved: true, By: "ana", Digest: "0000"})
	require.ErrorIs(t, err, scheduler.ErrDigest)
	_, err = drive.Answer(ctx, th, drive.Reply{Kind: fold.WaitConfirmation, Decision: facts.DecisionAccept})
	require.ErrorIs(t, err, drive.ErrBadReply)
	before := head(e, "t")

	ans, err := drive.Answer(ctx, th, drive.Reply{Kind: fold.WaitConfirmation, Request: req, Approved: true, By: "ana"})
	require.NoError(t, err)
	require.False(t, ans.Posted.Duplicate)
	require.Equal(t, before+1, head(e, "t"))
	got, err := facts.Decode[facts.ConfirmationAnswered](e.Last("t", facts.KindConfirmationAnswered))
	require.NoError(t, err)
	require.Equal(t, "ana", got.By)
	require.NotEmpty(t, got.Digest, "bound to the call shown")

	again, err := drive.Answer(ctx, th, drive.Reply{Kind: fold.WaitConfirmation, Approved: true, By: "bo"})
	require.NoError(t, err)
	require.NotNil(t, again.Repeat, "nothing open: the last answer says the same")
	_, err = drive.Answer(ctx, th, drive.Reply{Kind: fold.WaitConfirmation, Request: req, By: "bo", Then: facts.DenyContinue})
	require.ErrorIs(t, err, drive.ErrAnswerDiffers)
	require.Equal(t, before+1, head(e, "t"), "nothing more appended")
}

// AnswerAll answers every open request of its kind — the parent's and
// its children's — and says which; a thread waiting for none is
// ErrNoRequest.
func TestAnswerAll(t *testing.T) {
	e := harnesstest.NewDelegating(t, harnesstest.DelegateScript)
	th := e.Thread("p")
	_, err := th.Start(ctx, "Delegate it")
	require.NoError(t, err)
	st, err := drive.Inspect(ctx, th)
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, st.Status)
	require.Len(t, st.Waits, 1)

	_, err = drive.AnswerAll(ctx, th, drive.Reply{Kind: fold.WaitConfirmation, Request: "x", Approved: true})
	require.ErrorIs(t, err, drive.ErrBadReply, "all names no request")
	all, err := drive.AnswerAll(ctx, th, drive.Reply{Kind: fold.WaitConfirmation, Approved: true, By: "ana"})
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.Equal(t, "p.1-d1", all[0].Request.Thread)
	require.Equal(t, facts.KindConfirmationAnswered, harnesstest.LastFact(t, e.Store, "p.1-d1").Kind, "posted to the child")

	_, err = drive.AnswerAll(ctx, th, drive.Reply{Kind: fold.WaitQuestion, Text: "x"})
	var rerr *drive.RequestError
	require.ErrorAs(t, err, &rerr)
	require.ErrorIs(t, err, drive.ErrNoRequest)
}

// The State document reads back as it was written: the same keys,
// whatever front end wrote it, and a request's arguments as JSON.
func TestStateJSON(t *testing.T) {
	e, _ := parkedOn(t, harnesstest.ToolScript)
	st, err := drive.Inspect(ctx, e.Thread("t"))
	require.NoError(t, err)
	st.Preview("/nowhere", func(root, tool, args string) string { return root + " " + tool })
	b, err := json.Marshal(st)
	require.NoError(t, err)

	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	for _, k := range []string{"thread", "status", "title", "root", "waits", "head", "turns", "tokens"} {
		require.Contains(t, doc, k)
	}
	require.NotContains(t, doc, "View")
	w := doc["waits"].([]any)[0].(map[string]any)
	require.Equal(t, "call_1", w["request_id"].(string)[len(w["request_id"].(string))-6:])
	require.Equal(t, "cache.toml", w["args"].(map[string]any)["path"], "the arguments as JSON")
	require.Equal(t, w["request_id"], w["ref"])
	require.Equal(t, "/nowhere write_file", w["preview"])
	require.Equal(t, "Set the cache TTL to 300", doc["title"])

	var back drive.State
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, st.Head, back.Head)
	require.Equal(t, st.Waits[0].Args, back.Waits[0].Args)
	require.Equal(t, st.Waits[0].Wait, back.Waits[0].Wait)
	again, err := json.Marshal(back)
	require.NoError(t, err)
	require.JSONEq(t, string(b), string(again))

	// Arguments that are no JSON are a string, and read back as it.
	p := drive.Pending{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-x"}, Args: `{"path": "a`}
	pb, err := json.Marshal(p)
	require.NoError(t, err)
	require.Contains(t, string(pb), `"args":"{\"path\": \"a"`)
	var pp drive.Pending
	require.NoError(t, json.Unmarshal(pb, &pp))
	require.Equal(t, p.Args, pp.Args)
}
