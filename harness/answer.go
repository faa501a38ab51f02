package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// ErrAnswerDiffers: PostAnswer of an answer that contradicts one already
// given — to a request already answered otherwise, or under a key already
// used for another fact. Nothing is appended.
var ErrAnswerDiffers = errors.New("a different answer was already given")

// answerDiffers is ErrAnswerDiffers with its message: what was already
// given, and where. It also wraps the refusal that revealed it, if any.
type answerDiffers struct {
	msg   string
	cause error
}

func (e *answerDiffers) Error() string { return e.msg }

func (e *answerDiffers) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrAnswerDiffers}
	}
	return []error{ErrAnswerDiffers, e.cause}
}

// PostAnswer posts d to the thread id under key, as Post does, so that
// posting the same thing again is harmless: the way to post a person's
// word (an answer, a reconciliation, a message) when it may be given twice
// — from two terminals, or by a command run again.
//
// A post already made under key, or an answer already given to the same
// request with the same meaning (see SameAnswer) under another key, is
// reported as a duplicate: Posted.Duplicate, with the seq of the fact
// already in the log. An answer that differs from the one already given,
// or a different fact under a key already used, is an error wrapping
// ErrAnswerDiffers (and, for an answer refused as answered, the
// scheduler's scheduler.ErrAnswered); nothing is appended. Every other
// error of Post, such as scheduler.ErrUnknownRequest, is returned as is.
func (rt *Runtime) PostAnswer(ctx context.Context, actor Actor, id string, d facts.Draft, key string) (Posted, error) {
	p, err := rt.Post(ctx, actor, id, d, key)
	switch {
	case err == nil && p.Duplicate:
		f, err := readFact(ctx, rt.Store, id, p.Seq)
		if err != nil {
			return p, fmt.Errorf("post %s to %s: key %q is seq %d: %w", d.Kind, id, key, p.Seq, err)
		}
		if !SameAnswer(f, d) {
			return p, &answerDiffers{msg: fmt.Sprintf("key %q was already used at seq %d for another answer (%s); nothing appended", key, p.Seq, Describe(f))}
		}
		return p, nil
	case errors.Is(err, scheduler.ErrAnswered):
		f, ok, rerr := answerTo(ctx, rt.Store, id, d)
		if rerr != nil {
			return p, fmt.Errorf("post %s to %s: find the answer already given: %w", d.Kind, id, rerr)
		}
		if !ok {
			return p, err
		}
		if SameAnswer(f, d) {
			return Posted{Seq: f.Seq, Duplicate: true}, nil
		}
		return p, &answerDiffers{msg: fmt.Sprintf("already answered at seq %d (%s); nothing appended", f.Seq, Describe(f)), cause: err}
	}
	return p, err
}

// SameAnswer reports whether the fact f says what the draft d says: the
// same kind, and the same answer to the same request — a confirmation's
// approval, a question's text, a reconciliation's decision, a message's
// text. Who answered, and why, do not count. A payload that does not
// decode is the same only if its bytes are.
func SameAnswer(f facts.Fact, d facts.Draft) bool {
	if f.Kind != d.Kind {
		return false
	}
	r1, a1, ok1 := answerOf(f.Kind, f.Data)
	r2, a2, ok2 := answerOf(d.Kind, d.Data)
	if !ok1 || !ok2 {
		return bytes.Equal(f.Data, d.Data)
	}
	return r1 == r2 && a1 == a2
}

// AnsweredRequest is the request an answer fact answers: a confirmation's
// or question's request id, a reconciliation's action id. It is "" for a
// user message, another kind, or a payload that does not decode.
func AnsweredRequest(f facts.Fact) string {
	r, _, ok := answerOf(f.Kind, f.Data)
	if !ok {
		return ""
	}
	return r
}

// LastAnswer returns the thread's last fact of kind, provided nothing else
// was posted after it (facts the runtime appended since do not count):
// the answer a command repeated now would repeat. ok is false when there
// is none. A caller that finds nothing open to answer can build its answer
// to AnsweredRequest of the fact and, if SameAnswer holds, report it as
// already given.
func LastAnswer(ctx context.Context, store thread.Store, id string, kind facts.Kind) (f facts.Fact, ok bool, err error) {
	for g, rerr := range store.Read(ctx, id, 1) {
		if rerr != nil {
			return facts.Fact{}, false, fmt.Errorf("read %s: %w", id, rerr)
		}
		switch {
		case g.Kind == kind:
			f = g
		case facts.IsIngress(g.Cause):
			f = facts.Fact{} // something else was posted since
		}
	}
	return f, f.Seq != 0, nil
}

// answerTo finds the answer already given to the request d answers.
func answerTo(ctx context.Context, store thread.Store, id string, d facts.Draft) (facts.Fact, bool, error) {
	req, _, ok := answerOf(d.Kind, d.Data)
	if !ok || req == "" {
		return facts.Fact{}, false, nil
	}
	var found facts.Fact
	for f, err := range store.Read(ctx, id, 1) {
		if err != nil {
			return facts.Fact{}, false, fmt.Errorf("read %s: %w", id, err)
		}
		if f.Kind == d.Kind {
			if r, _, ok := answerOf(f.Kind, f.Data); ok && r == req {
				found = f
			}
		}
	}
	return found, found.Seq != 0, nil
}

// readFact reads the thread's fact at seq.
func readFact(ctx context.Context, store thread.Store, id string, seq uint64) (facts.Fact, error) {
	for f, err := range store.Read(ctx, id, seq) {
		if err != nil {
			return facts.Fact{}, fmt.Errorf("read %s at seq %d: %w", id, seq, err)
		}
		return f, nil
	}
	return facts.Fact{}, fmt.Errorf("thread %s has no seq %d", id, seq)
}

// answerOf is what an answer says: the request it answers and the answer.
// ok is false for a kind that is not posted from outside, or a payload
// that does not decode.
func answerOf(kind facts.Kind, data []byte) (request, answer string, ok bool) {
	f := facts.Fact{Kind: kind, Data: data}
	switch kind {
	case facts.KindConfirmationAnswered:
		p, err := facts.Decode[facts.ConfirmationAnswered](f)
		return p.RequestID, fmt.Sprint(p.Approved), err == nil
	case facts.KindQuestionAnswered:
		p, err := facts.Decode[facts.QuestionAnswered](f)
		return p.RequestID, p.Text, err == nil
	case facts.KindEffectReconciled:
		p, err := facts.Decode[facts.EffectReconciled](f)
		return p.ActionID, string(p.Decision), err == nil
	case facts.KindUserMessage:
		p, err := facts.Decode[facts.UserMessage](f)
		return "", p.Text, err == nil
	}
	return "", "", false
}
