package audit

import (
	"context"
	"fmt"
	"iter"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
)

// VerifyReplayTreeEach is ReplayTreeEach and VerifyLog in one reading and
// one fold of the thread's log: each fact is verified, then told, by the
// verifier's fold — a lean one (see Verifier.Lean) — so that `replay
// --verify` of a long log holds one fold of it, not two one after the
// other. It returns what ReplayTreeEach returns, and in verify what
// VerifyLog returns: tell is given the same entries, in the same order.
//
// From a fact that fails to verify on, the rest of the log is told by a
// fold of its own (folded again up to that fact), as ReplayTreeEach tells
// it; a log whose chain or link to its parent fails before any fact is
// folded is told by ReplayTreeEach.
func VerifyReplayTreeEach(ctx context.Context, store thread.Store, actor harness.Actor, id string, tell func(AuditEntry) error) (t TreeAudit, verify, err error) {
	th, snaps, verify := verifyStart(ctx, store, actor, id)
	if verify != nil || th == nil {
		if verify == nil {
			verify = VerifyLog(ctx, store, actor, id)
		}
		t, err = ReplayTreeEach(ctx, store, actor, id, tell)
		return t, verify, err
	}
	v := NewVerifier(th.Actor(), id)
	v.snaps = snaps
	v.Lean(fold.SourceFunc(func(from uint64) iter.Seq2[facts.Fact, error] { return store.Read(ctx, id, from) }))
	var plain *fold.Fold[harness.Services] // the fold after a fact that failed to verify
	a, fd, err := replayEachWith(ctx, store, id, tell, func(f facts.Fact) (*fold.Fold[harness.Services], error) {
		if plain != nil {
			return plain, plain.Step(f)
		}
		if verify = v.Add(f); verify == nil {
			return v.v.fold, nil
		}
		// It fails to verify here: the rest is told from a fold of the
		// log as ReplayTreeEach folds it, folded again up to f.
		plain = fold.New(th.Actor().New()...)
		for g, err := range store.Read(ctx, id, 1) {
			if err != nil {
				return nil, err
			}
			if g.Seq >= f.Seq {
				break
			}
			if err := plain.Step(g); err != nil {
				return nil, err
			}
		}
		return plain, plain.Step(f)
	})
	t = TreeAudit{Audit: a}
	switch {
	case verify != nil:
	case err != nil:
		verify = err // the log could not be read (or folded) whole
	case v.seq == 0:
		verify = fmt.Errorf("verify %s: %w", id, harness.ErrUnknownThread)
	default:
		if verify = v.End(); verify == nil {
			if verify = snaps.result(v.seq); verify == nil {
				verify = verifyLinks(ctx, store, actor, id, map[string]bool{id: true}, v)
			}
		}
	}
	if err != nil {
		return t, verify, err
	}
	kids, err := harness.Folded{ID: id, Fold: fd}.Children()
	if err != nil {
		return t, verify, err
	}
	t.Children, err = childAudits(ctx, store, actor, id, kids)
	return t, verify, err
}

// verifyStart is what VerifyLog does of a thread before it folds its log:
// the chain checked, the thread opened (a child by the actor its parent's
// delegation composes), the snapshots kept of it read. A failure is the
// verify error VerifyLog returns; a nil thread with no error, that
// VerifyLog is to say why.
func verifyStart(ctx context.Context, store thread.Store, actor harness.Actor, id string) (*harness.Thread, *snapshotCheck, error) {
	if err := store.Verify(ctx, id); err != nil {
		return nil, nil, err
	}
	th, err := (&harness.Runtime{Store: store}).Open(ctx, actor, id)
	if err != nil {
		return nil, nil, nil
	}
	snaps, err := keptSnapshots(ctx, store, id)
	if err != nil {
		return nil, nil, err
	}
	return th, snaps, nil
}
