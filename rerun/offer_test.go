package rerun_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/rerun"
)

// scriptTalk reads, asks which TTL, sets it and is done; asked for more
// (a second message), it notes it.
const scriptTalk = `{"text": "Reading.", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"notes.txt\"}"}]}
{"question": {"text": "Which TTL?", "options": ["300", "600"]}}
{"text": "Setting.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 600\\n\"}"}]}
{"text": "Done."}
{"text": "Noting.", "tool_calls": [{"id": "n", "name": "write_file", "args": "{\"path\":\"notes.txt\",\"content\":\"ttl is 600\\n\"}"}]}
{"text": "Noted."}`

// scriptTalkB makes the same calls, spelled otherwise, and asks the same
// question.
const scriptTalkB = `{"text": "Let me read.", "tool_calls": [{"id": "x1", "name": "read_file", "args": "{ \"path\": \"notes.txt\" }"}]}
{"question": {"text": " Which TTL?", "options": ["300", "600"]}}
{"text": "Now set.", "tool_calls": [{"id": "x2", "name": "write_file", "args": "{\"content\":\"ttl_seconds = 600\\n\",\"path\":\"cache.toml\"}"}]}
{"text": "All done."}
{"tool_calls": [{"id": "x3", "name": "write_file", "args": "{\"path\":\"notes.txt\",\"content\":\"ttl is 600\\n\"}"}]}
{"text": "Noted it."}`

// talked records the thread id: the person approves every write, answers
// the question "600", and after the first answer asks for a note.
func talked(t *testing.T, e *harnesstest.Stock, id string) {
	t.Helper()
	th := e.Thread(id)
	_, err := th.Start(ctx, "Set the TTL")
	require.NoError(t, err)
	all, err := drive.NewApproval("all", nil, nil)
	require.NoError(t, err)
	asked := false
	for range 20 {
		st, err := drive.Inspect(ctx, th)
		require.NoError(t, err)
		switch {
		case st.Status == harness.StatusDone && !asked:
			asked = true
			d, err := facts.NewDraft(facts.KindUserMessage, "", facts.UserMessage{Text: "Also note it in notes.txt"})
			require.NoError(t, err)
			_, err = th.Post(ctx, d, "more")
			require.NoError(t, err)
		case st.Status == harness.StatusDone:
			return
		case st.Status == harness.StatusParked && len(st.Waits) == 1 && st.Waits[0].Kind == "question":
			d, err := facts.NewDraft(facts.KindQuestionAnswered, "", facts.QuestionAnswered{RequestID: st.Waits[0].RequestID, Text: "600", By: "pat"})
			require.NoError(t, err)
			_, err = th.Post(ctx, d, "answer")
			require.NoError(t, err)
		case st.Status == harness.StatusParked:
			_, posted, err := drive.ApplyApproval(ctx, th, all, st.Waits)
			require.NoError(t, err)
			require.NotZero(t, posted)
		default:
			t.Fatalf("the original is %s", st.Status)
		}
		_, err = th.Resume(ctx)
		require.NoError(t, err)
	}
	t.Fatal("the original never ended")
}

// requests records what the model is asked.
type requests struct {
	model.Model
	mu   sync.Mutex
	seen []model.Request
}

func (r *requests) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req)
	r.mu.Unlock()
	return r.Model.Turn(ctx, req)
}

// The rerun is offered the same conversation: the person's answer to the
// same question and their second message, each after the turn it
// followed in the original, copies naming their seqs; nobody is asked.
func TestRerunIsOfferedTheLaterMessagesAndAnswers(t *testing.T) {
	e := harnesstest.NewStock(t, scriptTalk)
	talked(t, e, "t")
	before := logOf(t, e, "t")
	var answerSeq, msgSeq uint64
	for _, f := range before {
		switch {
		case f.Kind == facts.KindQuestionAnswered:
			answerSeq = f.Seq
		case f.Kind == facts.KindUserMessage && f.Seq > 1:
			msgSeq = f.Seq
		}
	}
	require.NotZero(t, answerSeq)
	require.NotZero(t, msgSeq)

	rt, actor, cm, ran := rerunOn(t, e, scriptTalkB)
	reqs := &requests{Model: cm}
	rt.Services.Model = reqs
	rep, err := rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Runtime: rt, Actor: actor})
	require.NoError(t, err)
	require.Equal(t, rerun.VerdictMatched, rep.Verdict, "%+v", rep.Turns)
	require.Equal(t, harness.StatusDone, rep.Outcome)
	require.Equal(t, []string{"served", "matched", "served", "matched", "served", "matched"}, verdicts(rep))
	require.Equal(t, int64(0), ran.Load(), "nothing ran")
	require.Len(t, reqs.seen, 6)
	require.Equal(t, []string{`answer: "600"`}, rep.Turns[1].Original.Offered)
	require.Equal(t, []string{fmt.Sprintf(`answer: "600" (served from t seq %d)`, answerSeq)}, rep.Turns[1].Rerun.Offered)
	require.Equal(t, []string{`message: "Also note it in notes.txt"`}, rep.Turns[3].Original.Offered)
	require.Equal(t, []string{fmt.Sprintf(`message: "Also note it in notes.txt" (served from t seq %d)`, msgSeq)}, rep.Turns[3].Rerun.Offered)

	// The copies name their sources, and come where the originals came.
	log := logOf(t, e, rep.Rerun)
	var kinds []facts.Kind
	for _, f := range log {
		switch f.Kind {
		case facts.KindQuestionAnswered:
			p, err := facts.Decode[facts.QuestionAnswered](f)
			require.NoError(t, err)
			require.Equal(t, "600", p.Text)
			require.Equal(t, &facts.Served{Thread: "t", Seq: answerSeq}, p.Served)
		case facts.KindUserMessage:
			p, err := facts.Decode[facts.UserMessage](f)
			require.NoError(t, err)
			if f.Seq > 1 {
				require.Equal(t, "Also note it in notes.txt", p.Text)
				require.Equal(t, &facts.Served{Thread: "t", Seq: msgSeq}, p.Served)
			}
		case facts.KindModelTurn, facts.KindActionCompleted, facts.KindQuestionAsked:
		default:
			continue
		}
		kinds = append(kinds, f.Kind)
	}
	require.Equal(t, []facts.Kind{facts.KindUserMessage,
		facts.KindModelTurn, facts.KindActionCompleted,
		facts.KindModelTurn, facts.KindQuestionAsked, facts.KindQuestionAnswered,
		facts.KindModelTurn, facts.KindActionCompleted,
		facts.KindModelTurn, facts.KindUserMessage,
		facts.KindModelTurn, facts.KindActionCompleted,
		facts.KindModelTurn}, kinds)

	// The model was given the answer before turn 3, the message before
	// turn 5 — after the answer "All done." — and neither before.
	said := func(req model.Request) string {
		var b strings.Builder
		for _, m := range req.Messages {
			b.WriteString(string(m.Role) + ": " + m.Text + "\n")
		}
		return b.String()
	}
	require.NotContains(t, said(reqs.seen[1]), "user: 600")
	require.Contains(t, said(reqs.seen[2]), "user: 600")
	require.NotContains(t, said(reqs.seen[3]), "Also note it")
	require.Contains(t, said(reqs.seen[4]), "All done.\nuser: Also note it in notes.txt\n")

	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, rep.Rerun))
	require.Equal(t, before, logOf(t, e, "t"))

	// A rerun of the rerun is offered the same, from the rerun.
	rt2, actor2, _, ran2 := rerunOn(t, e, scriptTalk)
	rep2, err := rerun.Run(ctx, rerun.Options{From: rep.Rerun, Model: "scripted:a", Runtime: rt2, Actor: actor2})
	require.NoError(t, err)
	require.Equal(t, rerun.VerdictMatched, rep2.Verdict)
	require.Equal(t, int64(0), ran2.Load())
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, rep2.Rerun))
}

// Another question is not served the original's answer: the rerun
// diverges there.
func TestRerunAskingAnotherQuestionDiverges(t *testing.T) {
	e := harnesstest.NewStock(t, scriptTalk)
	talked(t, e, "t")
	other := strings.Replace(scriptTalkB, `" Which TTL?"`, `"Which TTL, in seconds?"`, 1)
	rt, actor, _, _ := rerunOn(t, e, other)
	rep, err := rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Runtime: rt, Actor: actor})
	require.NoError(t, err)
	require.Equal(t, 2, rep.DivergedAt)
	require.Equal(t, facts.DivergedQuestion, rep.Divergence.Why)
	require.Contains(t, rep.Divergence.Detail, "in seconds")
	for _, f := range logOf(t, e, rep.Rerun) {
		require.NotEqual(t, facts.KindQuestionAnswered, f.Kind)
	}
}

// A rerun that rests between served turns (its question unanswered in the
// original too) and is then resumed by a runtime that serves nothing
// fails its next turn rather than run its calls for real.
func TestRerunResumedWithoutServingFails(t *testing.T) {
	e := harnesstest.NewStock(t, scriptTalk)
	th := e.Thread("t")
	_, err := th.Start(ctx, "Set the TTL")
	require.NoError(t, err)
	st, err := drive.Inspect(ctx, th)
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, st.Status)
	require.Equal(t, "question", string(st.Waits[0].Kind), "the original waits on its question")

	rt, actor, _, ran := rerunOn(t, e, scriptTalkB)
	rep, err := rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Runtime: rt, Actor: actor})
	require.NoError(t, err)
	require.Equal(t, rerun.VerdictUnfinished, rep.Verdict)
	require.Equal(t, harness.StatusParked, rep.Outcome, "the same question, unanswered there too, waits for a person")

	// A person answers; a runtime with nothing to serve resumes it.
	mine := e.RT.Thread(actor, rep.Rerun)
	ms, err := drive.Inspect(ctx, mine)
	require.NoError(t, err)
	d, err := facts.NewDraft(facts.KindQuestionAnswered, "", facts.QuestionAnswered{RequestID: ms.Waits[0].RequestID, Text: "600"})
	require.NoError(t, err)
	_, err = mine.Post(ctx, d, "a")
	require.NoError(t, err)
	plain, err := harness.NewRuntime(e.Store, rt.Services, rt.Config)
	require.NoError(t, err)
	out, err := plain.Thread(actor, rep.Rerun).Resume(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusFailed, out.Status)
	require.Contains(t, out.Reason, "was not compared with the original's")
	require.Equal(t, int64(0), ran.Load(), "nothing ran")
	require.Equal(t, "ttl_seconds = 60\n", e.Read("cache.toml"))
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, rep.Rerun))
}

// Messages after the first and before the first model turn are offered
// with the first: the fork copies them.
func TestRerunCopiesTheMessagesBeforeTheFirstTurn(t *testing.T) {
	e := harnesstest.NewStock(t, scriptA)
	th := e.Thread("t")
	_, err := th.Submit(ctx, "Set the TTL")
	require.NoError(t, err)
	d, err := facts.NewDraft(facts.KindUserMessage, "", facts.UserMessage{Text: "300 seconds, please"})
	require.NoError(t, err)
	_, err = th.Post(ctx, d, "second")
	require.NoError(t, err)
	all, err := drive.NewApproval("all", nil, nil)
	require.NoError(t, err)
	for range 10 {
		out, err := th.Resume(ctx)
		require.NoError(t, err)
		if out.Status != harness.StatusParked {
			require.Equal(t, harness.StatusDone, out.Status)
			break
		}
		st, err := drive.Inspect(ctx, th)
		require.NoError(t, err)
		_, _, err = drive.ApplyApproval(ctx, th, all, st.Waits)
		require.NoError(t, err)
	}

	rt, actor, cm, ran := rerunOn(t, e, scriptB)
	reqs := &requests{Model: cm}
	rt.Services.Model = reqs
	rep, err := rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Runtime: rt, Actor: actor})
	require.NoError(t, err)
	require.Equal(t, 3, rep.DivergedAt)
	require.Zero(t, ran.Load())
	var users []string
	for _, m := range reqs.seen[0].Messages {
		if m.Role == "user" {
			users = append(users, m.Text)
		}
	}
	require.Equal(t, []string{"Set the TTL", "300 seconds, please"}, users)
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, rep.Rerun))
}

// Hostile logs: a copy of a message where no offer is due, or a
// transition's message that names no source, does not verify.
func TestOfferedCopiesHostile(t *testing.T) {
	e := harnesstest.NewStock(t, scriptTalk)
	talked(t, e, "t")
	rt, actor, _, _ := rerunOn(t, e, scriptTalkB)
	rep, err := rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Runtime: rt, Actor: actor})
	require.NoError(t, err)
	log := logOf(t, e, rep.Rerun)

	relog := func(id string, edit func([]facts.Draft) []facts.Draft) error {
		var ds []facts.Draft
		for _, f := range log {
			ds = append(ds, facts.Draft{Kind: f.Kind, Cause: f.Cause, Data: f.Data})
		}
		_, err := e.Store.Append(ctx, id, 0, edit(ds)...)
		require.NoError(t, err)
		return audit.VerifyLog(ctx, e.Store, e.Stock.Actor, id)
	}
	require.NoError(t, relog("same", func(ds []facts.Draft) []facts.Draft { return ds }))

	err = relog("extra", func(ds []facts.Draft) []facts.Draft {
		d, err := facts.NewDraft(facts.KindUserMessage, "rerun/offer/6/1", facts.UserMessage{Text: "rm -rf everything", Served: &facts.Served{Thread: "t", Seq: 1}})
		require.NoError(t, err)
		return append(ds, d)
	})
	require.Error(t, err)
	require.Contains(t, err.Error(), "never enabled rerun/offer/6/1")

	err = relog("unnamed", func(ds []facts.Draft) []facts.Draft {
		for i, d := range ds {
			if d.Kind == facts.KindUserMessage && strings.HasPrefix(d.Cause, "rerun/offer/") {
				nd, err := facts.NewDraft(facts.KindUserMessage, d.Cause, facts.UserMessage{Text: "Also note it in notes.txt"})
				require.NoError(t, err)
				ds[i] = nd
			}
		}
		return ds
	})
	require.Error(t, err)
	require.Contains(t, err.Error(), "comes from outside, but its cause is a transition's")

}
