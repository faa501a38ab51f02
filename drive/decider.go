package drive

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
)

// Policy decides the tool calls that ask for confirmation without a
// person: Approval (a mode and patterns) is one, and a Go program writes
// its own, or wraps one in PolicyFunc. Drive (Options.Policy), serve,
// worker and the MCP server take a Policy; every answer it gives is
// recorded as a confirmation.answered whose By is the policy's Name and
// whose Reason is the Decision's Rule.
//
// Decide is given the tool's name, the capability the tool needs and
// the call's arguments as the model wrote them: hostile data. A policy
// that approves on what the arguments say must parse them as the tool
// does (see Subject and WorkspacePath for the paths patterns match).
// Decide must not block; a Decision with Ask set leaves the call to a
// person. A hook that asked a person is asked whatever the policy says
// (a denial still stands), and a call the loop guard asked about is
// never decided by a policy.
type Policy interface {
	// Name is who the policy's answers are recorded as given by. It
	// should not be mistaken for a person's name ("policy", "policy:ci").
	Name() string
	// Decide answers a call of tool, needing capability, with args.
	Decide(tool string, capability action.Capability, args string) Decision
}

// Name is PolicyBy: an approval's answers are recorded as given by
// "policy".
func (a Approval) Name() string { return PolicyBy }

// PolicyFunc is a Policy named name that decides with decide.
func PolicyFunc(name string, decide func(tool string, capability action.Capability, args string) Decision) Policy {
	return funcPolicy{name: name, decide: decide}
}

// funcPolicy is PolicyFunc's Policy.
type funcPolicy struct {
	name   string
	decide func(tool string, capability action.Capability, args string) Decision
}

func (p funcPolicy) Name() string { return p.name }

func (p funcPolicy) Decide(tool string, capability action.Capability, args string) Decision {
	return p.decide(tool, capability, args)
}

// ApplyPolicy answers the pending confirmations the policy decides,
// posting confirmation.answered to the thread (by the policy's Name, or
// PolicyBy when it has none, with the decision's Rule as the reason,
// under AnswerKey; a denial tells the model, and the thread goes on:
// facts.DenyContinue) — or, for a child's request, to the child (see
// Target) — and returns the pending requests that still need a person.
// posted counts the answers appended. A nil policy decides nothing. An
// Approval whose Root is "" is given the runtime's workspace.
func ApplyPolicy(ctx context.Context, th *harness.Thread, p Policy, waits []Pending) (needPerson []Pending, posted int, err error) {
	rt := th.Runtime()
	if a, ok := p.(Approval); ok && a.Root == "" {
		a.Root = rt.Services.Workspace
		p = a
	}
	by := PolicyBy
	if p != nil && p.Name() != "" {
		by = p.Name()
	}
	for _, w := range waits {
		if p == nil || w.Kind != fold.WaitConfirmation || w.Reason != "" {
			// Not a confirmation, or asked for a reason no rule decides
			// (the loop guard).
			needPerson = append(needPerson, w)
			continue
		}
		var capability action.Capability
		if t, ok := rt.Services.Tools.Lookup(w.Tool); ok {
			capability = t.Capability()
		}
		dec := p.Decide(w.Tool, capability, w.Args)
		switch {
		case dec.Ask:
			dec = Decision{Ask: true}
		case dec.Approved && w.Hook != "":
			// A hook asked a person: no allow rule or mode answers for
			// them (a deny rule still does).
			dec = Decision{Ask: true}
		}
		if dec.Ask && w.HookApproved != "" && w.Hook == "" {
			// Your own (user-scope) hook approved it, as an allow rule
			// would; a deny rule, checked first, still wins.
			dec = Decision{Approved: true, Rule: "hook " + w.HookApproved + " (user) approved"}
		}
		if dec.Ask {
			needPerson = append(needPerson, w)
			continue
		}
		// A denial tells the model the rule said no, and it goes on.
		r := Reply{Kind: fold.WaitConfirmation, Request: Ref(w), Approved: dec.Approved, By: by, Reason: dec.Rule, Then: facts.DenyContinue}
		d, err := r.Draft(w)
		if err != nil {
			return nil, posted, err
		}
		target, err := Target(ctx, th, w)
		if err != nil {
			return nil, posted, err
		}
		pp, err := target.Post(ctx, d, AnswerKey(facts.KindConfirmationAnswered, w.RequestID))
		if err != nil {
			return nil, posted, fmt.Errorf("answer %s by %s (%s): %w", w.RequestID, by, dec.Rule, err)
		}
		if !pp.Duplicate {
			posted++
		}
	}
	return needPerson, posted, nil
}
