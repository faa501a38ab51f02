package rewind

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
)

// SeqError is a fork's last seq that is not a seq of the thread, which
// has facts 1 to Last.
type SeqError struct {
	Thread    string
	Seq, Last uint64
}

func (e *SeqError) Error() string {
	return fmt.Sprintf("fork %s: at %d is not a seq of the thread (it has facts 1 to %d)", e.Thread, e.Seq, e.Last)
}

// MidStepError is a fork's last seq that falls inside what one step of
// the thread wrote: the fact after it has the same cause.
type MidStepError struct {
	Thread string
	Seq    uint64
	Cause  string
}

func (e *MidStepError) Error() string {
	return fmt.Sprintf("fork %s: at %d falls inside one step (%s wrote seq %d and the fact after it): fork before that step or after it", e.Thread, e.Seq, e.Cause, e.Seq)
}

// Is makes a MidStepError match ErrMidStep.
func (e *MidStepError) Is(target error) bool { return target == ErrMidStep }

// ForkID is the id Fork gives a fork when none is named:
// "<from>-at<seq>".
func ForkID(from string, at uint64) string {
	return from + "-at" + strconv.FormatUint(at, 10)
}

// Fork starts thread to as a copy of thread from's log up to and including
// seq at, followed by a thread.forked fact naming the origin — "what if I
// had answered otherwise": post a different answer to the fork and resume
// it. The copied facts keep their kinds, causes and payloads, so the fork
// folds to the same view the original had at seq at, and a key used there
// is used in the fork; the store stamps them anew (their times and hashes
// are the fork's own). The whole fork is one append: it exists completely
// or not at all. The workspace is not forked: actions resumed in the fork
// act on the workspace as it is.
//
// In a tree of threads (see harness.Delegate), a child the thread had
// spawned and not heard from by seq at is spawned anew for the fork (the
// fork's resume runs a child of its own); a child that had reported is
// shared, its log being history both threads have. A child thread is not
// forked itself: fork its parent.
func Fork(ctx context.Context, store thread.Store, from string, at uint64, to string) (thread.Head, error) {
	if err := harness.ValidateNewRoot(to); err != nil {
		return thread.Head{}, fmt.Errorf("fork %s: new thread id: %w", from, err)
	}
	head, err := store.Head(ctx, from)
	if errors.Is(err, thread.ErrNotFound) {
		return thread.Head{}, fmt.Errorf("fork %s: %w", from, harness.ErrUnknownThread)
	}
	if err != nil {
		return thread.Head{}, fmt.Errorf("fork %s: %w", from, err)
	}
	if at < 1 || at > head.Seq {
		return thread.Head{}, &SeqError{Thread: from, Seq: at, Last: head.Seq}
	}
	if _, err := store.Head(ctx, to); err == nil {
		return thread.Head{}, fmt.Errorf("fork %s into %s: %w", from, to, harness.ErrThreadExists)
	} else if !errors.Is(err, thread.ErrNotFound) {
		return thread.Head{}, fmt.Errorf("fork %s into %s: %w", from, to, err)
	}
	// The facts copied must chain as the log says (ReadLinked): a fact
	// changed in place would otherwise be stamped anew into a fork
	// whose own chain then verifies.
	drafts := make([]facts.Draft, 0, at+1)
	hash, err := thread.ReadLinked(ctx, store, from, at, func(f facts.Fact) error {
		drafts = append(drafts, facts.Draft{Kind: f.Kind, Cause: f.Cause, Data: f.Data})
		return nil
	})
	if err != nil {
		return thread.Head{}, fmt.Errorf("fork %s: %w", from, err)
	}
	// A cut inside what one step wrote (a model turn's instructions.read
	// and model.turn share a cause) would leave the fork a step half
	// done, which the fold takes for done: the cut must fall between
	// steps.
	if at < head.Seq {
		for next, err := range store.Read(ctx, from, at+1) {
			if err != nil {
				return thread.Head{}, fmt.Errorf("fork %s: %w", from, err)
			}
			if last := drafts[len(drafts)-1]; next.Cause == last.Cause {
				return thread.Head{}, &MidStepError{Thread: from, Seq: at, Cause: last.Cause}
			}
			break
		}
	}
	if drafts, err = forkTree(from, to, drafts); err != nil {
		return thread.Head{}, err
	}
	d, err := facts.NewDraft(facts.KindThreadForked, facts.IngressCause("fork-"+from+"-"+strconv.FormatUint(at, 10)),
		facts.ThreadForked{From: from, At: at, Hash: hash.String()})
	if err != nil {
		return thread.Head{}, fmt.Errorf("fork %s: %w", from, err)
	}
	drafts = append(drafts, d)
	h, err := store.Append(ctx, to, 0, drafts...)
	if errors.Is(err, thread.ErrConflict) {
		return thread.Head{}, fmt.Errorf("fork %s into %s: %w", from, to, harness.ErrThreadExists)
	}
	if err != nil {
		return thread.Head{}, fmt.Errorf("fork %s into %s: %w", from, to, err)
	}
	return h, nil
}
