package rewind

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
)

// forkTree makes the copied log of a fork of a tree's thread: a child the
// origin had spawned and not yet heard from at the fork's seq is spawned
// anew for the fork (its child.spawned names the fork's own child, which a
// resume of the fork creates: the fork's "what if" runs its own child);
// a child that had reported stays shared — its log is history both
// threads have. A child thread itself is not forked: its log is bound to
// its parent's; fork the parent.
func forkTree(from, to string, drafts []facts.Draft) ([]facts.Draft, error) {
	if len(drafts) > 0 && drafts[0].Kind == facts.KindThreadSpawned {
		p, err := facts.Decode[facts.ThreadSpawned](facts.Fact{Kind: drafts[0].Kind, Data: drafts[0].Data})
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("fork %s: it is a child of %s, bound to its parent's log: fork %s instead", from, p.Parent, p.Parent)
	}
	reported := map[string]bool{} // child id → reported at the fork's seq; membership only
	for _, d := range drafts {
		if d.Kind == facts.KindChildReported {
			p, err := facts.Decode[facts.ChildReported](facts.Fact{Kind: d.Kind, Data: d.Data})
			if err != nil {
				return nil, fmt.Errorf("fork %s: %w", from, err)
			}
			reported[p.Child] = true
		}
	}
	for i, d := range drafts {
		if d.Kind != facts.KindChildSpawned {
			continue
		}
		p, err := facts.Decode[facts.ChildSpawned](facts.Fact{Kind: d.Kind, Data: d.Data})
		if err != nil {
			return nil, fmt.Errorf("fork %s: %w", from, err)
		}
		if p.Refused != "" || reported[p.Child] {
			continue
		}
		p.Child = thread.ChildID(to, p.CallID)
		nd, err := facts.NewDraft(d.Kind, d.Cause, p)
		if err != nil {
			return nil, fmt.Errorf("fork %s: %w", from, err)
		}
		drafts[i] = nd
	}
	return drafts, nil
}

// treeChanges are the changes of the children a thread spawned that land
// after seq to: a child's changes count where its report is in the
// parent's log (all of them, its own children's included, in their
// order), and an unreported child's after the parent's last fact.
func treeChanges(ctx context.Context, rt *harness.Runtime, actor harness.Actor, th *harness.Thread, to, head uint64) ([]change, error) {
	r, err := th.Reading(ctx)
	if err != nil {
		return nil, err
	}
	var out []change
	for _, c := range r.Children() {
		ch := c.Child
		land := head + 1
		if ch.Reported != nil {
			land = ch.ReportedSeq
		}
		if land <= to {
			continue
		}
		kid, err := th.Open(ctx, ch.ID())
		if err != nil {
			return nil, fmt.Errorf("child %s: %w", ch.ID(), err)
		}
		kh, err := rt.Store.Head(ctx, ch.ID())
		if errors.Is(err, thread.ErrNotFound) {
			continue // not created yet: it changed nothing
		}
		if err != nil {
			return nil, err
		}
		kr, err := kid.Reading(ctx)
		if err != nil {
			return nil, fmt.Errorf("child %s: %w", ch.ID(), err)
		}
		own := changesAfter(kr, 0)
		sub, err := treeChanges(ctx, rt, actor, kid, 0, kh.Seq)
		if err != nil {
			return nil, err
		}
		// The child's own changes and its children's, in the child's
		// order, all at the parent's landing seq.
		all := append(own, sub...)
		sortChanges(all)
		for _, c := range all {
			out = append(out, change{seq: land, paths: c.paths})
		}
	}
	return out, nil
}
