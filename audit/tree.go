package audit

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

func init() {
	// A delegation's records: the spawn is a transition's; a child's
	// first and last facts, its report, a stop and a stop asked for come
	// from outside.
	runtimeKinds[facts.KindChildSpawned] = true
	for _, k := range []facts.Kind{facts.KindThreadSpawned, facts.KindThreadEnded, facts.KindChildReported, facts.KindThreadStopped, facts.KindStopRequested} {
		answerKinds[k] = true
	}
}

// firstFacts says why f cannot open a log where it is, or "": a thread
// starts with the message that started it, or — a child — with its spawn
// record and then its task.
func firstFacts(f, before facts.Fact) string {
	start := facts.IngressCause(harness.StartKey)
	isStart := f.Kind == facts.KindUserMessage && f.Cause == start
	switch {
	case f.Seq == 1 && f.Kind == facts.KindThreadSpawned:
		if f.Cause != facts.IngressCause(facts.SpawnKey) {
			return fmt.Sprintf("a child's first fact is its spawn record, with cause %s", facts.IngressCause(facts.SpawnKey))
		}
	case f.Seq == 1 && !isStart:
		return fmt.Sprintf("a thread starts with the message that started it (%s, cause %s), or a child with its spawn record (%s)",
			facts.KindUserMessage, start, facts.KindThreadSpawned)
	case f.Seq == 2 && before.Kind == facts.KindThreadSpawned && !isStart:
		return fmt.Sprintf("a child's second fact is its task (%s, cause %s)", facts.KindUserMessage, start)
	}
	return ""
}

// VerifyTree is VerifyLog of a thread and of every thread of the tree
// below it (see VerifyLog): each log on its own, and the links between
// them both ways —
//
//   - each child.spawned (not refused) has its child: a thread whose first
//     fact, thread.spawned, names that fact (its seq, hash and key), and
//     the child is verified in turn;
//   - each child.reported names its child's final head: the seq and hash
//     of the child's last fact, a thread.ended with the same status;
//   - a child names a spawn its parent's log has, and the parent's report
//     of it, if any, names its final head.
//
// A fork shares the children its origin had reported when it was cut: a
// copied spawn names the origin's child, whose link names the origin.
// VerifyLog checks the same; VerifyTree is its name for a reader.
func VerifyTree(ctx context.Context, store thread.Store, actor harness.Actor, id string) error {
	return VerifyLog(ctx, store, actor, id)
}

func verifyTree(ctx context.Context, store thread.Store, actor harness.Actor, id string, seen map[string]bool) error {
	if err := store.Verify(ctx, id); err != nil {
		return err
	}
	seen[id] = true
	rt := &harness.Runtime{Store: store}
	th, err := rt.Open(ctx, actor, id)
	if err != nil {
		if errors.Is(err, harness.ErrNotChild) {
			return &VerifyError{Thread: id, Seq: 1, Kind: facts.KindThreadSpawned, Cause: facts.IngressCause(facts.SpawnKey),
				Reason: "its link to its parent: " + err.Error()}
		}
		return fmt.Errorf("verify %s: %w", id, err)
	}
	snaps, err := keptSnapshots(ctx, store, id)
	if err != nil {
		return err
	}
	// The fold is lean: it reads the log again from the store for what
	// only a reading of the whole thread needs, instead of holding it.
	src := fold.SourceFunc(func(from uint64) iter.Seq2[facts.Fact, error] { return store.Read(ctx, id, from) })
	vf, err := verifyFacts(th.Actor(), id, store.Read(ctx, id, 1), snaps, src)
	if err != nil {
		return err
	}
	return verifyLinks(ctx, store, actor, id, seen, vf)
}

// verifyLinks checks the links of a thread whose log vf verified (see
// VerifyLog) — to its parent, and to its children, each verified in turn.
func verifyLinks(ctx context.Context, store thread.Store, actor harness.Actor, id string, seen map[string]bool, vf *Verifier) error {
	rt := &harness.Runtime{Store: store}
	// The links are read from the fold that verified the log (the log as
	// it was checked), not from another fold of it: a long log's fold is
	// the most a verifier holds, and it holds one.
	v, err := harness.Folded{ID: id, Fold: vf.v.fold}.View()
	if err != nil {
		return err
	}
	if sp := v.Lineage.Spawn; sp != nil {
		if err := reportedAsEnded(ctx, rt, actor, id, *sp); err != nil {
			return err
		}
	}
	if fk := vf.forked; fk != nil && fk.Hash != "" {
		if reason, err := forkedFromAsRecorded(ctx, store, *fk); err != nil {
			return err
		} else if reason != "" {
			return &VerifyError{Thread: id, Seq: vf.forkedSeq, Kind: facts.KindThreadForked, Cause: "", Reason: reason}
		}
	}
	kids, err := harness.Folded{ID: id, Fold: vf.v.fold}.Children()
	if err != nil {
		return err
	}
	if len(kids) == 0 {
		return nil // no link to check (forkOrigins would read the whole log again)
	}
	origins, err := forkOrigins(ctx, store, id)
	if err != nil {
		return err
	}
	for _, c := range kids {
		ch := *c.Child
		bad := func(seq uint64, kind facts.Kind, reason string) error {
			return &VerifyError{Thread: id, Seq: seq, Kind: kind, Cause: "", Reason: reason}
		}
		spawn, ok, err := thread.SpawnOf(ctx, store, ch.ID())
		switch {
		case err != nil:
			return err
		case !ok:
			if ch.Reported != nil {
				return bad(ch.SpawnedSeq, facts.KindChildSpawned, fmt.Sprintf("child %s spawned here, and reported, has no thread of its own", ch.ID()))
			}
			if _, err := store.Head(ctx, ch.ID()); err == nil {
				return bad(ch.SpawnedSeq, facts.KindChildSpawned, fmt.Sprintf("child %s spawned here cannot be created: its id is taken by a thread this one did not spawn (a fork or rerun named so)", ch.ID()))
			} else if !errors.Is(err, thread.ErrNotFound) {
				return err
			}
			// Spawned, not created yet: a resume creates it.
			continue
		case spawn.Seq != ch.SpawnedSeq || !origins.has(spawn.Parent, ch.SpawnedSeq):
			return bad(ch.SpawnedSeq, facts.KindChildSpawned, fmt.Sprintf("child %s spawned here names its spawn at seq %d of %s", ch.ID(), spawn.Seq, spawn.Parent))
		}
		if rep := ch.Reported; rep != nil {
			if err := endMatches(ctx, store, ch.ID(), *rep); err != nil {
				return bad(ch.ReportedSeq, facts.KindChildReported, err.Error())
			}
		}
		if spawn.Parent == id && !seen[ch.ID()] {
			if err := verifyTree(ctx, store, actor, ch.ID(), seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// origins are a thread and the threads it was forked from, each with the
// seq up to which its log was copied (the thread itself: all of it).
type origins map[string]uint64

// has reports whether the thread's log holds fact seq of thread id: its
// own, or one copied from an origin.
func (o origins) has(id string, seq uint64) bool {
	at, ok := o[id]
	return ok && seq <= at
}

// forkOrigins follows a thread's thread.forked records back
// (forkOf), at most maxForkDepth of them.
func forkOrigins(ctx context.Context, store thread.Store, id string) (origins, error) {
	o := origins{id: ^uint64(0)}
	limit := ^uint64(0)
	for cur, n := id, 0; n < maxForkDepth; n++ {
		fk, ok, err := forkOf(ctx, store, cur)
		if _, seen := o[fk.From]; err != nil || !ok || seen {
			return o, err
		}
		limit = min(limit, fk.At)
		o[fk.From] = limit
		cur = fk.From
	}
	return o, nil
}

// endMatches checks a report against the child's log: its final head is
// the seq and hash reported, and a thread.ended with the status reported.
func endMatches(ctx context.Context, store thread.Store, child string, rep facts.ChildReported) error {
	h, err := store.Head(ctx, child)
	if err != nil {
		return fmt.Errorf("the report of child %s: %w", child, err)
	}
	if h.Seq != rep.Seq || h.Hash.String() != rep.Hash {
		return fmt.Errorf("the report of child %s names its final head seq %d (hash %.12s), but its head is seq %d (hash %.12s)",
			child, rep.Seq, rep.Hash, h.Seq, h.Hash.String())
	}
	if h.Kind != facts.KindThreadEnded {
		return fmt.Errorf("the report of child %s names its seq %d, a %s, not its thread.ended", child, h.Seq, h.Kind)
	}
	for f, err := range store.Read(ctx, child, h.Seq) {
		if err != nil {
			return err
		}
		te, err := facts.Decode[facts.ThreadEnded](f)
		if err != nil {
			return err
		}
		if te.Status != rep.Status {
			return fmt.Errorf("the report of child %s says %s, but the child ended %s", child, rep.Status, te.Status)
		}
		break
	}
	return nil
}

// reportedAsEnded checks, from a child's side, that its parent's report
// of it (if the parent has one) names its final head.
func reportedAsEnded(ctx context.Context, rt *harness.Runtime, actor harness.Actor, id string, sp facts.ThreadSpawned) error {
	parent, err := rt.Open(ctx, actor, sp.Parent)
	if err != nil {
		return fmt.Errorf("verify %s: its parent: %w", id, err)
	}
	r, err := parent.Reading(ctx)
	if err != nil {
		return fmt.Errorf("verify %s: its parent: %w", id, err)
	}
	c, ok := r.Child(id)
	if !ok || c.Child.Reported == nil {
		return nil
	}
	if err := endMatches(ctx, rt.Store, id, *c.Child.Reported); err != nil {
		h, _ := rt.Store.Head(ctx, id)
		return &VerifyError{Thread: id, Seq: h.Seq, Kind: h.Kind, Reason: fmt.Sprintf("its parent %s reported it at seq %d: %v", sp.Parent, c.Child.ReportedSeq, err)}
	}
	return nil
}

// TreeAudit is the Audit of a thread and of the children it spawned, each
// with its own, in the order they were spawned: the record of a tree.
type TreeAudit struct {
	Audit
	// Spawn is the delegation that spawned the thread (nil for a root).
	Spawn *scheduler.Call
	// Children are the audits of the children the thread spawned that
	// have a thread (its own, not a fork's shared ones), in order.
	Children []TreeAudit
}

// ReplayTree is Replay of a thread and of every child below it.
func ReplayTree(ctx context.Context, store thread.Store, actor harness.Actor, id string) (TreeAudit, error) {
	return replayTree(ctx, store, actor, id, nil)
}

func replayTree(ctx context.Context, store thread.Store, actor harness.Actor, id string, spawn *scheduler.Call) (TreeAudit, error) {
	a, err := Replay(ctx, store, actor, id)
	t := TreeAudit{Audit: a, Spawn: spawn}
	if err != nil {
		return t, err
	}
	rt := &harness.Runtime{Store: store}
	th, err := rt.Open(ctx, actor, id)
	if err != nil {
		return t, err
	}
	r, err := th.Reading(ctx)
	if err != nil {
		return t, err
	}
	t.Children, err = childAudits(ctx, store, actor, id, r.Children())
	return t, err
}

// childAudits are the audits of the children of thread id that its
// delegations kids spawned and that have a thread of their own.
func childAudits(ctx context.Context, store thread.Store, actor harness.Actor, id string, kids []scheduler.Call) ([]TreeAudit, error) {
	var out []TreeAudit
	for _, c := range kids {
		sp, ok, err := thread.SpawnOf(ctx, store, c.Child.ID())
		if err != nil {
			return out, err
		}
		if !ok || sp.Parent != id {
			continue // not created yet, or a fork's shared child
		}
		c := c
		kid, err := replayTree(ctx, store, actor, c.Child.ID(), &c)
		if err != nil {
			return out, err
		}
		out = append(out, kid)
	}
	return out, nil
}

// maxForkDepth bounds the walk from a fork up to the thread it began as,
// as harness bounds the walk up a tree.
const maxForkDepth = 64

// forkOf reads a thread's fork record (see rewind.Fork): the thread and
// seq it was forked from, and true, when it is a fork — its
// thread.forked, posted right after the facts copied (at seq At+1).
func forkOf(ctx context.Context, store thread.Store, id string) (facts.ThreadForked, bool, error) {
	for f, err := range store.Read(ctx, id, 1) {
		if err != nil {
			return facts.ThreadForked{}, false, fmt.Errorf("read %s: %w", id, err)
		}
		if f.Kind != facts.KindThreadForked || !facts.IsIngress(f.Cause) {
			continue
		}
		p, err := facts.Decode[facts.ThreadForked](f)
		if err != nil {
			return p, false, fmt.Errorf("thread %s: %w", id, err)
		}
		if f.Seq == p.At+1 {
			return p, true, nil
		}
	}
	return facts.ThreadForked{}, false, nil
}

// forkedFromAsRecorded checks a fork's record against the thread it was
// forked from, while that thread is kept: its fact At must hash to what
// the fork recorded, or one of the two logs was changed since the fork
// (or the copy was of a log already changed). It returns why not, "" when
// it does, or when the thread forked from is not in the store (nothing to
// check it against).
func forkedFromAsRecorded(ctx context.Context, store thread.Store, fk facts.ThreadForked) (string, error) {
	if _, err := store.Head(ctx, fk.From); errors.Is(err, thread.ErrNotFound) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("the thread it was forked from, %s: %w", fk.From, err)
	}
	for f, err := range store.Read(ctx, fk.From, fk.At) {
		if err != nil {
			return fmt.Sprintf("forked from %s at seq %d, which cannot be read now: %v", fk.From, fk.At, err), nil
		}
		if h := f.Hash().String(); h != fk.Hash {
			return fmt.Sprintf("forked from %s at seq %d, which hashed to %.12s then and hashes to %.12s now: one of the two logs was changed", fk.From, fk.At, fk.Hash, h), nil
		}
		return "", nil
	}
	return fmt.Sprintf("forked from %s at seq %d, which %s no longer has", fk.From, fk.At, fk.From), nil
}
