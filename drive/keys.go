package drive

import (
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// The replies a person gives at a terminal's prompt: one key, or the word
// it stands for ("y" or "yes"), in any case. A front end asks; what a
// reply means, and the Reply it gives, is said here.

// keyOf is the index of the answer reply is, among answers given as
// key/word pairs ("y", "yes"), or -1 for none.
func keyOf(reply string, answers ...string) int {
	reply = strings.ToLower(strings.TrimSpace(reply))
	if reply == "" {
		return -1
	}
	for i := 0; i+1 < len(answers); i += 2 {
		if reply == answers[i] || reply == answers[i+1] {
			return i / 2
		}
	}
	return -1
}

// ConfirmKey is what a reply to a confirmation's prompt says.
type ConfirmKey int

// The replies to a confirmation.
const (
	// ConfirmNoKey is a reply that is no answer: the prompt asks again.
	ConfirmNoKey ConfirmKey = iota
	// ConfirmYes approves the call ("y").
	ConfirmYes
	// ConfirmAlways approves it, and calls like it for the rest of the
	// thread ("a").
	ConfirmAlways
	// ConfirmProject approves it, and calls like it in later threads of
	// the project ("p"), once the rule kept is settled.
	ConfirmProject
	// ConfirmNo denies it; the model is told, and goes on ("n").
	ConfirmNo
	// ConfirmDeny denies it and stops the thread ("d").
	ConfirmDeny
	// ConfirmSkip leaves it unanswered ("s").
	ConfirmSkip
)

// ConfirmKeys are the keys a confirmation's prompt takes, for a person.
const ConfirmKeys = "y, a, p, n, d or s"

// ParseConfirmKey reads a reply to a confirmation's prompt: y(es),
// a(lways), p(roject), n(o), d(eny) or s(kip); anything else is
// ConfirmNoKey.
func ParseConfirmKey(reply string) ConfirmKey {
	return ConfirmKey(keyOf(reply, "y", "yes", "a", "always", "p", "project", "n", "no", "d", "deny", "s", "skip") + 1)
}

// Reply is the answer k gives the confirmation p, by by: rule is the
// always-rule of ConfirmAlways and ConfirmProject (a Pattern's string),
// reason a denial's. A skip, or no key, answers nothing (ok false); so
// does an always without its rule.
func (k ConfirmKey) Reply(p Pending, by, rule, reason string) (r Reply, ok bool) {
	r = Reply{Kind: fold.WaitConfirmation, Request: Ref(p), By: by}
	switch k {
	case ConfirmYes:
		r.Approved = true
	case ConfirmAlways, ConfirmProject:
		if rule == "" {
			return Reply{}, false
		}
		r.Approved, r.Always, r.Project = true, rule, k == ConfirmProject
	case ConfirmNo:
		r.Reason, r.Then = reason, facts.DenyContinue
	case ConfirmDeny:
		r.Reason, r.Then = reason, facts.DenyStop
	default:
		return Reply{}, false
	}
	return r, true
}

// Stops reports whether nothing else of the turn is asked after k: a
// denial that stops the thread, or a rule that may answer the rest.
func (k ConfirmKey) Stops() bool {
	return k == ConfirmDeny || k == ConfirmAlways || k == ConfirmProject
}

// ParseReconcileKey reads a reply to a reconciliation's prompt: the
// decision a(ccept), r(etry) or (a)b(andon); s(kip) is skip; anything
// else is no answer (ok false).
func ParseReconcileKey(reply string) (d facts.Decision, skip, ok bool) {
	switch keyOf(reply, "a", "accept", "r", "retry", "b", "abandon", "s", "skip") {
	case 0:
		return facts.DecisionAccept, false, true
	case 1:
		return facts.DecisionRetry, false, true
	case 2:
		return facts.DecisionAbandon, false, true
	case 3:
		return "", true, true
	}
	return "", false, false
}

// ParseElicitKey reads a reply to an MCP server's question: the action
// a(ccept), d(ecline) or c(ancel); s(kip) leaves it to be answered
// elsewhere; anything else is no answer (ok false).
func ParseElicitKey(reply string) (a facts.ElicitAction, skip, ok bool) {
	switch keyOf(reply, "a", "accept", "d", "decline", "c", "cancel", "s", "skip") {
	case 0:
		return facts.ElicitAccept, false, true
	case 1:
		return facts.ElicitDecline, false, true
	case 2:
		return facts.ElicitCancel, false, true
	case 3:
		return "", true, true
	}
	return "", false, false
}

// ParsePlanKey reads a reply to a plan's prompt: y(es) acts on it, s(kip)
// does not; anything else is no answer (ok false).
func ParsePlanKey(reply string) (act, ok bool) {
	switch keyOf(reply, "y", "yes", "s", "skip") {
	case 0:
		return true, true
	case 1:
		return false, true
	}
	return false, false
}

// ParseRaiseReply reads a reply to a budget's prompt (ParseRaise): the
// Reply that raises the tree's budget waited on by p, by by; an empty
// reply skips (ok false, no error).
func ParseRaiseReply(p Pending, reply, by string) (r Reply, ok bool, err error) {
	if strings.TrimSpace(reply) == "" {
		return Reply{}, false, nil
	}
	add, err := ParseRaise(reply)
	if err != nil {
		return Reply{}, false, err
	}
	if len(p.Bounds) > 0 {
		if err := refuseRaise("", append(slices.Clip(p.Bounds), BoundTurns), "raise it in "+boundWords(p.Bounds), add); err != nil {
			return Reply{}, false, err
		}
	}
	return Reply{Kind: fold.WaitBudget, Request: Ref(p), USD: add.USD, Tokens: add.Tokens, Turns: add.Turns, By: by}, true, nil
}
