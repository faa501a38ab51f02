package drive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// ErrAnswerDiffers: PostAnswer of an answer that contradicts one already
// given — to a request already answered otherwise, or under a key already
// used for another fact. Nothing is appended.
var ErrAnswerDiffers = errors.New("a different answer was already given")

// ErrNotYesNo: a YesNo's JSON is not true, false or null.
var ErrNotYesNo = errors.New("want true, false or null")

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

// PostAnswer posts d to the thread under key, as Post does, so that
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
func PostAnswer(ctx context.Context, th *harness.Thread, d facts.Draft, key string) (harness.Posted, error) {
	id := th.ID()
	p, err := th.Post(ctx, d, key)
	switch {
	case err == nil && p.Duplicate:
		f, err := thread.ReadAt(ctx, th.Store(), id, p.Seq)
		if err != nil {
			return p, fmt.Errorf("post %s to %s: key %q is seq %d: %w", d.Kind, id, key, p.Seq, err)
		}
		if !SameAnswer(f, d) {
			if f.Kind == d.Kind && AnsweredRequest(f) != "" {
				return p, &answerDiffers{msg: fmt.Sprintf("already answered: %s (seq %d); nothing appended", sayAnswer(f.Kind, f.Data), p.Seq)}
			}
			return p, &answerDiffers{msg: fmt.Sprintf("key %q was already used at seq %d for another fact (%s); nothing appended", key, p.Seq, sayAnswer(f.Kind, f.Data))}
		}
		return p, nil
	case errors.Is(err, scheduler.ErrAnswered):
		r, rerr := th.Reading(ctx)
		if rerr != nil {
			return p, fmt.Errorf("post %s to %s: find the answer already given: %w", d.Kind, id, rerr)
		}
		seq, given, said, ok := answerIn(r, d)
		if !ok {
			return p, err
		}
		if _, want, ok := answerOf(d.Kind, d.Data); ok && want == given {
			return harness.Posted{Seq: seq, Duplicate: true}, nil
		}
		return p, &answerDiffers{msg: fmt.Sprintf("already answered: %s (seq %d); nothing appended", said, seq), cause: err}
	}
	return p, err
}

// answerIn finds, in the thread's reading, the answer already given to
// the request d answers: its seq, what it said (as answerOf says it), and
// in a few words, for a person, what it was.
func answerIn(r scheduler.Reading, d facts.Draft) (seq uint64, answer, said string, ok bool) {
	req, _, ok := answerOf(d.Kind, d.Data)
	if !ok || req == "" {
		return 0, "", "", false
	}
	return answerTo(r, d.Kind, req)
}

// answerTo finds, in the thread's reading, the answer of kind given to
// the request req: as answerIn.
func answerTo(r scheduler.Reading, kind facts.Kind, req string) (seq uint64, answer, said string, ok bool) {
	say := func(answer, by string) string {
		s := req + " " + sayGiven(kind, answer)
		if by != "" {
			s += " by " + by
		}
		return s
	}
	switch kind {
	case facts.KindConfirmationAnswered:
		if c, ok := r.Call(req); ok && c.Answer != nil {
			a := fmt.Sprint(c.Answer.Approved)
			return c.AnswerSeq, a, say(a, c.Answer.By), true
		}
	case facts.KindQuestionAnswered:
		if q, ok := r.Question(req); ok && q.Answer != nil {
			return q.AnswerSeq, q.Answer.Text, say(q.Answer.Text, q.Answer.By), true
		}
		if e, ok := r.Elicitation(req); ok && e.Answer != nil {
			// Said by its action alone: the input may be a secret the
			// server asked for, and whoever answers again is told this.
			return e.AnswerSeq, questionAnswer(*e.Answer), req + " " + elicitedSaid(*e.Answer.Elicited, e.Answer.By), true
		}
	case facts.KindEffectReconciled:
		if a, ok := r.Action(req); ok && a.Reconciled != nil {
			dec := string(a.Reconciled.Decision)
			return a.ReconciledSeq, dec, say(dec, a.Reconciled.By), true
		}
	}
	return 0, "", "", false
}

// sayAnswer says in a few words what an answer's payload says: the
// request, the answer, and who gave it.
func sayAnswer(kind facts.Kind, data []byte) string {
	req, a, ok := answerOf(kind, data)
	if !ok {
		return string(kind)
	}
	if kind == facts.KindQuestionAnswered {
		if p, err := facts.Decode[facts.QuestionAnswered](facts.Fact{Kind: kind, Data: data}); err == nil && p.Elicited != nil {
			return strings.TrimSpace(req + " " + elicitedSaid(*p.Elicited, p.By))
		}
	}
	s := strings.TrimSpace(req + " " + sayGiven(kind, a))
	if by := answeredBy(kind, data); by != "" {
		s += " by " + by
	}
	return s
}

// answeredBy is who gave an answer, as its payload says.
func answeredBy(kind facts.Kind, data []byte) string {
	f := facts.Fact{Kind: kind, Data: data}
	switch kind {
	case facts.KindConfirmationAnswered:
		p, _ := facts.Decode[facts.ConfirmationAnswered](f)
		return p.By
	case facts.KindQuestionAnswered:
		p, _ := facts.Decode[facts.QuestionAnswered](f)
		return p.By
	case facts.KindEffectReconciled:
		p, _ := facts.Decode[facts.EffectReconciled](f)
		return p.By
	}
	return ""
}

// sayGiven says an answer as answerOf gives it, for a person.
func sayGiven(kind facts.Kind, answer string) string {
	switch kind {
	case facts.KindConfirmationAnswered:
		if answer == "true" {
			return "approved"
		}
		return "denied"
	case facts.KindQuestionAnswered, facts.KindUserMessage:
		return strconv.Quote(answer)
	}
	return answer
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

// LastAnswer returns the thread's last fact of kind (an answer: a
// confirmation's, a question's, a reconciliation, or a user.message),
// provided nothing else was posted after it (facts the runtime appended
// since do not count): the answer a command repeated now would repeat. ok
// is false when there is none. A caller that finds nothing open to answer
// can build its answer to AnsweredRequest of the fact and, if SameAnswer
// holds, report it as already given. It is read from the thread's view
// (harness.View.Own), never from a scan of the log.
func LastAnswer(ctx context.Context, th *harness.Thread, kind facts.Kind) (f facts.Fact, ok bool, err error) {
	v, err := th.View(ctx)
	if errors.Is(err, harness.ErrUnknownThread) {
		return facts.Fact{}, false, nil
	}
	if err != nil {
		return facts.Fact{}, false, err
	}
	f, ok = v.Own.LastAnswer(kind)
	return f, ok, nil
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
		return p.RequestID, questionAnswer(p), err == nil
	case facts.KindEffectReconciled:
		p, err := facts.Decode[facts.EffectReconciled](f)
		return p.ActionID, string(p.Decision), err == nil
	case facts.KindUserMessage:
		p, err := facts.Decode[facts.UserMessage](f)
		return "", p.Text, err == nil
	}
	return "", "", false
}

// Errors of Answer; the error is a *RequestError.
var (
	// ErrNoRequest: the thread waits for no request of the kind (or for
	// none with the id named).
	ErrNoRequest = errors.New("no such open request")
	// ErrWhichRequest: the thread waits for several requests of the kind
	// and none was named.
	ErrWhichRequest = errors.New("several open requests; name one")
)

// RequestError is what Answer could not answer: the thread, the kind of
// request, the id named ("" for none), and the ids open.
type RequestError struct {
	Thread string
	Kind   fold.WaitKind
	Named  string
	Open   []string
	// Status is the thread's status.
	Status harness.Status
	err    error
}

func (e *RequestError) Error() string {
	switch {
	case errors.Is(e.err, ErrWhichRequest):
		return fmt.Sprintf("thread %s waits for %d %ss: %s; name one", e.Thread, len(e.Open), e.Kind, strings.Join(e.Open, ", "))
	case e.Named != "" && len(e.Open) > 0:
		return fmt.Sprintf("thread %s has no %s request %q; it waits for %s", e.Thread, e.Kind, e.Named, strings.Join(e.Open, ", "))
	case e.Named != "":
		return fmt.Sprintf("thread %s has no %s request %q, and waits for none", e.Thread, e.Kind, e.Named)
	}
	return fmt.Sprintf("thread %s waits for no %s (it is %s)", e.Thread, e.Kind, e.Status)
}

// Unwrap returns ErrNoRequest or ErrWhichRequest.
func (e *RequestError) Unwrap() error { return e.err }

// Answered says what Answer did.
type Answered struct {
	// Request is the request answered.
	Request Pending
	// Posted says where the answer is in the log (Duplicate when it was
	// given before).
	Posted harness.Posted
	// Repeat, when not nil, is an answer already given that this one
	// repeats: no request of the kind was open, and the last answer
	// posted says the same. Nothing was posted.
	Repeat *facts.Fact
}

// Answer gives the reply to the thread's open request of r.Kind — the one
// r.Request names, or the only one open when it names none — posted with
// PostAnswer under AnswerKey: the way a person's word reaches a thread
// from a front end. The requests of the children a thread waits on are
// its own (see Inspect): an answer to one is posted to the child;
// r.Request may name one "<child>/<id>" (see Ref) when its id alone
// names several. When no request of the kind is open and the last answer
// posted is the one the reply makes again, the answer is a repeat:
// nothing is posted, and Answered.Repeat says so. Otherwise a request
// that cannot be found is a *RequestError (ErrNoRequest,
// ErrWhichRequest); a reply that does not fit is ErrBadReply.
func Answer(ctx context.Context, th *harness.Thread, r Reply) (Answered, error) {
	return AnswerThrough(ctx, th, r, AnswerPending)
}

// AnswerThrough is Answer with the reply posted to the request it names by
// post (stock.Session.AnswerPending, which adds a reply's always-rule to
// the thread's policy first; AnswerPending refuses one).
func AnswerThrough(ctx context.Context, th *harness.Thread, r Reply, post func(context.Context, *harness.Thread, Pending, Reply) (harness.Posted, error)) (Answered, error) {
	if err := r.Check(); err != nil {
		return Answered{}, err
	}
	if r.Kind == fold.WaitBudget {
		return answerBudget(ctx, th, r)
	}
	kind, request := r.Kind, r.Request
	st, err := Inspect(ctx, th)
	if err != nil {
		return Answered{}, err
	}
	var open []Pending
	var ids []string
	for _, w := range st.Waits {
		if w.Kind == kind {
			open = append(open, w)
			ids = append(ids, Ref(w))
		}
	}
	rerr := &RequestError{Thread: th.ID(), Kind: kind, Named: request, Open: ids, Status: st.Status, err: ErrNoRequest}
	var target Pending
	switch {
	case request != "":
		// A request named but not open is posted all the same: an answer
		// given again is a duplicate, a contradiction is refused, an
		// unknown request is ErrNoRequest.
		target = Pending{Wait: fold.Wait{Kind: kind, RequestID: request}}
		if th, id, ok := strings.Cut(request, "/"); ok {
			target.Thread, target.RequestID = th, id
		}
		switch n := countFunc(open, func(p Pending) bool { return matches(p, request) }); {
		case n == 0 && kind == fold.WaitQuestion && target.Thread == "":
			if err := elicitationEnded(st, target.RequestID); err != nil {
				return Answered{}, err
			}
		case n == 1:
			target = open[slices.IndexFunc(open, func(p Pending) bool { return matches(p, request) })]
		case n > 1:
			rerr.err = ErrWhichRequest
			return Answered{}, rerr
		}
	case len(open) == 1:
		target = open[0]
	case len(open) > 1:
		rerr.err = ErrWhichRequest
		return Answered{}, rerr
	case kind == fold.WaitPlan:
		// A plan acted on is not waited on again: no repeat to find.
		return Answered{}, rerr
	default:
		// Answering again what was just answered is harmless: say so.
		f, ok, err := LastAnswer(ctx, th, AnswerKind(kind))
		if err != nil {
			return Answered{}, err
		}
		if req := AnsweredRequest(f); ok && req != "" {
			p := Pending{Wait: fold.Wait{Kind: kind, RequestID: req}}
			if again, err := r.Draft(p); err == nil && SameAnswer(f, again) {
				return Answered{Request: p, Posted: harness.Posted{Seq: f.Seq, Duplicate: true}, Repeat: &f}, nil
			}
		}
		return Answered{}, rerr
	}
	p, err := post(ctx, th, target, r)
	if errors.Is(err, scheduler.ErrUnknownRequest) {
		return Answered{}, rerr
	}
	return Answered{Request: target, Posted: p}, err
}

func countFunc[T any](xs []T, f func(T) bool) int {
	n := 0
	for _, x := range xs {
		if f(x) {
			n++
		}
	}
	return n
}

// elicitedSaid says an answer to an MCP server's form for a person: its
// action and who gave it, never the input (it may be a password the
// server asked for; present.Describe leaves it out too).
func elicitedSaid(e facts.Elicited, by string) string {
	s := string(e.Action) + " for the MCP server"
	if len(e.Content) > 0 {
		s += " (the input not shown)"
	}
	if by != "" {
		s += " by " + by
	}
	return s
}

// questionAnswer is what a question's answer says: its text, or an MCP
// server's form's answer (its action, then the input given).
func questionAnswer(p facts.QuestionAnswered) string {
	if e := p.Elicited; e != nil {
		return strings.TrimSpace(string(e.Action) + " " + string(e.Content))
	}
	return p.Text
}

// elicitationEnded refuses an answer to an MCP server's question of st's
// thread that is not open because no answer can reach the server: the
// call that asked is in doubt (the process that ran it, and the server
// with it, are gone) or has ended. Nil for anything else (a question
// answered already, or no MCP server's: the answer goes on as usual).
func elicitationEnded(st State, request string) error {
	e, ok := st.View.Turn.Elicitation(request)
	if !ok || e.Answer != nil || e.Asked.Elicit == nil {
		return nil
	}
	call, server := e.Asked.Elicit.ActionID, e.Asked.Elicit.Server
	var msg string
	if a, ok := st.View.Turn.Action(call); e.Running {
		msg = fmt.Sprintf("the question %s is the MCP server %s's, asked during call %s, which is in doubt: the process that ran it is gone, and the server with it, so no answer can reach it; resume thread %s: it records what the call did, and a person settles it (accept, retry or abandon)",
			request, server, call, st.Thread)
	} else if ok && a.Interrupted != nil {
		msg = fmt.Sprintf("the question %s is the MCP server %s's, asked during call %s, which did not finish (its process died, or it was stopped): no answer can reach the server; settle the call instead (accept, retry or abandon)",
			request, server, call)
	} else {
		msg = fmt.Sprintf("the question %s is the MCP server %s's, asked during call %s, which has ended: no answer can reach the server", request, server, call)
	}
	return &plainError{msg: msg, err: fmt.Errorf("%w: %w", ErrBadReply, ErrCallEnded)}
}
