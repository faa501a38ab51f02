package drive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// Reply is a person's word on a request a thread waits for, as every
// front end takes it: approve or deny a confirmation, answer a question,
// settle an open effect. Reply.Draft makes it the answer fact, and Answer,
// AnswerAll and AnswerPending post it; no front end builds an answer fact
// of its own.
//
// Who may reply is the front end's to decide (see the Trust section of
// DESIGN.md): a Reply is posted only through a channel the sandbox cannot
// reach, naming the person it came from (By).
type Reply struct {
	// Kind is the kind of request replied to: confirmation, question or
	// reconcile.
	Kind fold.WaitKind `json:"kind"`
	// Request names the request: its id, "<child>/<id>" for a child's
	// (see Ref), or "" for the only one of Kind open.
	Request string `json:"request_id,omitempty"`
	// By is who replies, for the record.
	By string `json:"by,omitempty"`
	// Approved approves a confirmation; false denies it.
	Approved bool `json:"approved,omitempty"`
	// Digest, on a confirmation, is the digest of the call replied to: a
	// reply given for another call is refused (scheduler.ErrDigest). ""
	// takes the digest of the call the request shows, for a front end
	// that showed it to the person who replies.
	Digest string `json:"digest,omitempty"`
	// Then, on a denial, says what the thread does next (see
	// facts.AfterDenial): the model is told and goes on, or the thread
	// stops. "" records a denial as it was recorded before denials said.
	Then facts.AfterDenial `json:"then,omitempty"`
	// Reason says why: a confirmation's reason (the model is told of a
	// denial), or a reconciliation's note.
	Reason string `json:"reason,omitempty"`
	// Text is a question's answer. Option, when set, picks the question's
	// Option-th option (from 1) instead — unless Text is itself one of
	// the options, or there is no such option, when Text stands.
	Text   string `json:"text,omitempty"`
	Option int    `json:"option,omitempty"`
	// Decision settles an open effect: accept, retry or abandon.
	Decision facts.Decision `json:"decision,omitempty"`
	// Elicit answers an MCP server's question (a question with Pending.
	// Elicit set): accept, decline or cancel; Content is the input given
	// with accept, a JSON object the server's schema must validate.
	// Fields, with accept and no Content, are the input as a form gives
	// it — text by field name — typed by the server's schema.
	Elicit  facts.ElicitAction `json:"elicit,omitempty"`
	Content json.RawMessage    `json:"content,omitempty"`
	Fields  map[string]string  `json:"fields,omitempty"`
	// Always, on an approval, is a person's "always for this thread": a
	// rule (a Pattern, such as Always gives for the call) added to the
	// thread's own policy as an allow pattern before the approval is
	// posted, so that what it matches is approved from then on. The
	// approval's reason, when none is given, says it ("always: RULE").
	// The rule is added through the settings' merge, which drive cannot
	// read: stock.Session.AnswerPending posts such a reply; Draft refuses
	// one that still carries its rule.
	Always string `json:"always,omitempty"`
	// Project, with Always, is "always, for this project": the rule is
	// also kept for the workspace in the person's own configuration (see
	// stock.Place.KeepProjectRule), so that later threads there start with
	// it, and the thread's policy records it from that scope.
	Project bool `json:"project,omitempty"`
	// USD, Tokens and Turns raise the tree's budget (a reply of kind
	// budget, given to the root: see RaiseBudget); Turns its root's bound
	// in model turns.
	USD    float64 `json:"usd,omitempty"`
	Tokens int64   `json:"tokens,omitempty"`
	Turns  int64   `json:"turns,omitempty"`
}

// Raise is the amount a reply of kind budget raises the budget by.
func (r Reply) Raise() facts.Spend { return facts.Spend{USD: r.USD, Tokens: r.Tokens, Turns: r.Turns} }

// ErrBadReply: a reply that does not fit the request it names (a
// confirmation's reply with a decision, a question's with no text, an
// unknown kind). Nothing is posted.
var ErrBadReply = errors.New("the reply does not fit the request")

// Draft is the answer fact the reply gives to the open request p: a
// confirmation.answered, question.answered or effect.reconciled. A reply
// that does not fit p is an error wrapping ErrBadReply.
func (r Reply) Draft(p Pending) (facts.Draft, error) {
	if r.Kind != p.Kind {
		return facts.Draft{}, fmt.Errorf("%w: a %s reply to the %s %s", ErrBadReply, r.Kind, p.Kind, Ref(p))
	}
	if r.Always != "" {
		return facts.Draft{}, fmt.Errorf("%w: the rule %q is added to the thread's policy before the approval is posted (stock.Session.AnswerPending)", ErrBadReply, r.Always)
	}
	switch p.Kind {
	case fold.WaitConfirmation:
		digest := r.Digest
		if digest == "" {
			digest = p.Digest
		}
		ans := facts.ConfirmationAnswered{RequestID: p.RequestID, Approved: r.Approved, By: r.By, Reason: r.Reason, Digest: digest}
		if !r.Approved {
			ans.Then = r.Then
		}
		return facts.NewDraft(facts.KindConfirmationAnswered, "", ans)
	case fold.WaitQuestion:
		if p.Elicit != nil || r.Elicit != "" {
			return r.elicited(p)
		}
		text := r.Text
		if n := r.Option; n >= 1 && n <= len(p.Options) && !slices.Contains(p.Options, text) {
			text = p.Options[n-1]
		}
		if strings.TrimSpace(text) == "" {
			return facts.Draft{}, fmt.Errorf("%w: the question %s is answered with text", ErrBadReply, Ref(p))
		}
		return facts.NewDraft(facts.KindQuestionAnswered, "", facts.QuestionAnswered{RequestID: p.RequestID, Text: text, By: r.By})
	case fold.WaitReconcile:
		if err := r.Decision.Validate(); err != nil {
			return facts.Draft{}, fmt.Errorf("%w: the open effect %s is settled with accept, retry or abandon: %w", ErrBadReply, Ref(p), err)
		}
		return facts.NewDraft(facts.KindEffectReconciled, "", facts.EffectReconciled{ActionID: p.RequestID, Decision: r.Decision, By: r.By, Note: r.Reason})
	case fold.WaitBudget:
		return facts.NewDraft(facts.KindBudgetRaised, "", facts.BudgetRaised{Add: r.Raise(), By: r.By})
	case fold.WaitPlan:
		return facts.Draft{}, fmt.Errorf("%w: a plan is answered by two facts in one append, posted by AnswerPending (see AnswerPlan)", ErrBadReply)
	}
	return facts.Draft{}, fmt.Errorf("%w: a %s cannot be replied to", ErrBadReply, p.Kind)
}

// Check reports whether the reply could answer a request of its kind at
// all, before any is looked up: a known kind, a question's text, a
// reconciliation's decision. Draft checks it again against the request.
func (r Reply) Check() error {
	if r.Always != "" && (r.Kind != fold.WaitConfirmation || !r.Approved) {
		return fmt.Errorf("%w: an always-rule comes with an approval", ErrBadReply)
	}
	if r.Project && r.Always == "" {
		return fmt.Errorf("%w: a rule for the project names its rule (always)", ErrBadReply)
	}
	switch r.Kind {
	case fold.WaitConfirmation:
		if r.Decision != "" || r.Text != "" {
			return fmt.Errorf("%w: a confirmation is approved or denied", ErrBadReply)
		}
		if r.Always != "" {
			if _, err := ParsePattern(r.Always); err != nil {
				return fmt.Errorf("%w: %w", ErrBadReply, err)
			}
		}
		if r.Then != "" {
			if err := r.Then.Validate(); err != nil {
				return fmt.Errorf("%w: %w", ErrBadReply, err)
			}
		}
	case fold.WaitQuestion:
		if r.Elicit != "" {
			if err := r.Elicit.Validate(); err != nil {
				return fmt.Errorf("%w: %w", ErrBadReply, err)
			}
			break
		}
		if strings.TrimSpace(r.Text) == "" && r.Option == 0 {
			return fmt.Errorf("%w: a question is answered with text", ErrBadReply)
		}
	case fold.WaitReconcile:
		if err := r.Decision.Validate(); err != nil {
			return fmt.Errorf("%w: an open effect is settled with accept, retry or abandon: %w", ErrBadReply, err)
		}
	case fold.WaitBudget:
		if err := (facts.BudgetRaised{Add: r.Raise()}).Validate(); err != nil {
			return fmt.Errorf("%w: a budget is raised by an amount: %w", ErrBadReply, err)
		}
	case fold.WaitPlan:
		switch text := strings.TrimSpace(r.Text); {
		case r.Approved && text != "":
			return fmt.Errorf("%w: a plan is acted on (approved) or answered with text asking for another, not both", ErrBadReply)
		case !r.Approved && text == "":
			return fmt.Errorf("%w: a plan is acted on (approved: true) or answered with text asking for another plan", ErrBadReply)
		case r.Digest != "" || r.Decision != "" || r.Always != "" || r.Option != 0:
			return fmt.Errorf("%w: a plan's answer is approved or a text", ErrBadReply)
		}
	default:
		return fmt.Errorf("%w: kind %q: want confirmation, question, reconcile, budget or plan", ErrBadReply, r.Kind)
	}
	return nil
}

// AnswerKind is the kind of fact that answers a wait of kind k (a plan's:
// plan mode switched, acting on it or not).
func AnswerKind(k fold.WaitKind) facts.Kind {
	switch k {
	case fold.WaitPlan:
		return facts.KindPlanModeSet
	case fold.WaitQuestion:
		return facts.KindQuestionAnswered
	case fold.WaitReconcile:
		return facts.KindEffectReconciled
	case fold.WaitBudget:
		return facts.KindBudgetRaised
	}
	return facts.KindConfirmationAnswered
}

// AnswerPending posts the reply to the open request p of th's tree (to
// the child p names, see Target) with PostAnswer under AnswerKey: the way
// to answer a request a person was shown, as the prompt does.
func AnswerPending(ctx context.Context, th *harness.Thread, p Pending, r Reply) (harness.Posted, error) {
	if p.Kind == fold.WaitBudget && r.Kind == fold.WaitBudget {
		// A budget is the tree's: raised on th, its root, whichever
		// thread of it waits.
		return GrowBudget(ctx, th, r.Raise(), r.By)
	}
	if p.Kind == fold.WaitPlan && r.Kind == fold.WaitPlan {
		to, err := Target(ctx, th, p)
		if err != nil {
			return harness.Posted{}, err
		}
		return AnswerPlan(ctx, to, p.RequestID, r)
	}
	d, err := r.Draft(p)
	if err != nil {
		return harness.Posted{}, err
	}
	to, err := Target(ctx, th, p)
	if err != nil {
		return harness.Posted{}, err
	}
	return PostAnswer(ctx, to, d, AnswerKey(d.Kind, p.RequestID))
}

// AnswerAll gives the reply to every request of its kind that the thread
// (and the children it waits on) waits for — "approve all": Reply.Request
// must be "". It returns what was answered, in the order of State.Waits;
// a request answered the same way before is among them, Posted.Duplicate.
// A thread that waits for no request of the kind is a *RequestError
// (ErrNoRequest). The first error stops it; what was answered before it
// stays answered.
func AnswerAll(ctx context.Context, th *harness.Thread, r Reply) ([]Answered, error) {
	if r.Request != "" {
		return nil, fmt.Errorf("%w: a reply to all requests names none (it names %q)", ErrBadReply, r.Request)
	}
	if err := r.Check(); err != nil {
		return nil, err
	}
	if r.Kind == fold.WaitBudget {
		a, err := answerBudget(ctx, th, r) // one raise, however many wait
		if err != nil {
			return nil, err
		}
		return []Answered{a}, nil
	}
	st, err := Inspect(ctx, th)
	if err != nil {
		return nil, err
	}
	var out []Answered
	for _, w := range st.Waits {
		if w.Kind != r.Kind {
			continue
		}
		p, err := AnswerPending(ctx, th, w, r)
		if err != nil {
			return out, err
		}
		out = append(out, Answered{Request: w, Posted: p})
	}
	if len(out) == 0 {
		return nil, &RequestError{Thread: th.ID(), Kind: r.Kind, Status: st.Status, err: ErrNoRequest}
	}
	return out, nil
}

// elicited is the answer fact of a reply to the MCP server's question p:
// accept (with the input, checked against the server's schema), decline
// or cancel. Text is no answer to a server's form.
func (r Reply) elicited(p Pending) (facts.Draft, error) {
	if p.Elicit == nil {
		return facts.Draft{}, fmt.Errorf("%w: the question %s is not an MCP server's: it is answered with text", ErrBadReply, Ref(p))
	}
	if r.Elicit == "" {
		return facts.Draft{}, fmt.Errorf("%w: the question %s is the MCP server %s's: answer accept (with the input asked for), decline or cancel", ErrBadReply, Ref(p), p.Elicit.Server)
	}
	a := facts.Elicited{Action: r.Elicit}
	if r.Elicit == facts.ElicitAccept {
		content := r.Content
		if len(content) == 0 && len(r.Fields) > 0 {
			c, err := elicitContent(p.Elicit, r.Fields)
			if err != nil {
				return facts.Draft{}, err
			}
			content = c
		}
		if len(content) == 0 {
			content = json.RawMessage("{}")
		}
		// A field left out takes the server's default (SEP-1034), as
		// the person was shown: the answer recorded is what is sent.
		content, err := withDefaults(p.Elicit, content)
		if err != nil {
			return facts.Draft{}, err
		}
		a.Content = facts.RawJSON(content)
	}
	if err := scheduler.CheckElicited(p.Elicit.Schema, a); err != nil {
		return facts.Draft{}, fmt.Errorf("%w: %s: %w", ErrBadReply, Ref(p), err)
	}
	return facts.NewDraft(facts.KindQuestionAnswered, "", facts.QuestionAnswered{RequestID: p.RequestID, By: r.By, Elicited: &a})
}
