package scheduler

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

// A thread that worked in a git worktree of its own and ended done with
// a change offers it at its end (facts.WorktreeResult.Offered on its
// worktree.finished): the scheduler folds the offer as a call of
// MergeTool naming the branch, base and head the record names — a call
// nobody's model made, in a "turn" of its own — and carries it as any
// call: its request is recorded, its before_tool hooks run, and it waits
// for a person's approval (a write; a call needing a capability the
// thread was not granted is denied by the boundary, unasked). Approved,
// the merge runs through the effect boundary, observed in the workspace
// it writes; a conflict is the action's failure, naming the paths, and
// nothing is applied. Denied, it is completed unrun and the branch keeps
// the change. Either way the thread is done after it: no model turn
// follows, and the model's conversation is not told (the call is not
// the model's). Only the scheduler without a scope folds the offer, so
// a thread offers its merge once.

// offerRef is the ref (and request and action id) of the merge offered
// by the worktree.finished at seq.
func offerRef(seq uint64) string { return "merge-" + strconv.FormatUint(seq, 10) }

// worktreeFinished folds a thread's worktree.finished: an offered merge
// becomes the latest turn's one call.
func (s *state[S]) worktreeFinished(f facts.Fact, p facts.WorktreeResult) {
	if !p.Offered || s.env.Scope != "" {
		return
	}
	args, err := json.Marshal(struct {
		Branch string `json:"branch"`
		Base   string `json:"base"`
		Head   string `json:"head"`
	}{p.Branch, p.Base, p.Head})
	if err != nil {
		return // strings always marshal
	}
	ref := offerRef(f.Seq)
	offer := p
	c := &call{ref: ref, turn: s.turns, turnSeq: f.Seq, call: facts.ToolCall{ID: ref, Name: MergeTool, Args: string(args)}, offer: &offer}
	if s.env.LoopGuard > 0 {
		a := canonicalArgs(c.call.Args)
		c.canon = &a
	}
	s.calls = []*call{c}
	s.all = append(s.all, c)
	s.byRef[ref] = c
	s.question = nil
	s.answerTurn, s.answer = 0, ""
}

// offerPolicy is the policy of an offered merge: a write, asked of a
// person, whatever the tool's own policy (or its absence) says.
var offerPolicy = Policy{Confirm: true, Capability: action.Write}

// offerSummary is what the wait for an offered merge says.
func offerSummary(c *call) string {
	o := c.offer
	return fmt.Sprintf("merge into the workspace what the thread left on branch %s (%.12s..%.12s), changing %s? Denied, the branch keeps it",
		o.Branch, o.Base, o.Head, changedPaths(o.Changed))
}

// maxOfferPaths bounds the paths an offer's wait and denial name (the
// branch's own files, written by the model): the rest are counted.
const maxOfferPaths = 20

// changedPaths names the paths an offered merge changes, the first
// maxOfferPaths of them, each bounded.
func changedPaths(paths []string) string {
	shown := paths[:min(len(paths), maxOfferPaths)]
	out := make([]string, len(shown))
	for i, p := range shown {
		out[i] = bound(p)
	}
	s := strings.Join(out, ", ")
	if n := len(paths) - len(shown); n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}

// offerDenied is the reason a denied offer's action is completed with:
// who denied it, and where the change stays.
func offerDenied(c *call) string {
	by := c.answer.By
	if by == "" {
		by = "a person"
	}
	why := fmt.Sprintf("%s denied the merge: branch %s keeps the change (%.12s..%.12s, %s)", by, c.offer.Branch, c.offer.Base, c.offer.Head, changedPaths(c.offer.Changed))
	if r := strings.TrimSpace(c.answer.Reason); r != "" {
		why += ": " + r
	}
	return why
}
