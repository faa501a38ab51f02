package audit_test

import (
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// A lean verifier answers for the log it verified: what it reads again
// (for a fact naming a call it let go of) must be that log, fact by
// fact, or verifying fails with ErrRereadDiffers; a reading that fails
// is an error of the reading, not a *VerifyError saying the log is bad.
func TestLeanRereadIsTheLogVerified(t *testing.T) {
	actor := harnesstest.NewStock(t, harnesstest.TextScript).Stock.Actor
	log := goodLog(t)
	// A late approval of turn 1's call, settled long before: the lean
	// fold reads the log again to judge it.
	d, err := facts.NewDraft(facts.KindConfirmationAnswered, "ingress/late-approval", facts.ConfirmationAnswered{RequestID: "1-call_1", Approved: true, By: "ana"})
	require.NoError(t, err)
	last := log[len(log)-1]
	log = append(log, facts.Fact{Thread: last.Thread, Seq: last.Seq + 1, Prev: last.Hash(), At: last.At, Kind: d.Kind, Cause: d.Cause, Data: d.Data})

	verify := func(reread func(yield func(facts.Fact, error) bool)) error {
		v := audit.NewVerifier(actor, log[0].Thread)
		v.Lean(fold.SourceFunc(func(uint64) iter.Seq2[facts.Fact, error] { return reread }))
		for _, f := range log {
			if err := v.Add(f); err != nil {
				return err
			}
		}
		return v.End()
	}
	from := func(l []facts.Fact) func(yield func(facts.Fact, error) bool) {
		return func(yield func(facts.Fact, error) bool) {
			for _, f := range l {
				if !yield(f, nil) {
					return
				}
			}
		}
	}

	// Read again faithfully: the approval is refused, as by a whole fold.
	err = verify(from(log))
	var ve *audit.VerifyError
	require.ErrorAs(t, err, &ve)
	require.Contains(t, err.Error(), "request already answered")

	// Read again from a store that changed meanwhile: refused as such.
	other := append([]facts.Fact(nil), log...)
	other[2].Cause += "x"
	err = verify(from(other))
	require.ErrorIs(t, err, audit.ErrRereadDiffers)
	require.False(t, errors.As(err, &ve), "not the log's failure: %v", err)

	// A log changed and chained again (each prev the hash of the changed
	// fact before it): its chain holds, but not to the hash of the fact
	// verified last.
	rechained := append([]facts.Fact(nil), log...)
	rechained[2].Cause += "x"
	for i := 3; i < len(rechained); i++ {
		rechained[i].Prev = rechained[i-1].Hash()
	}
	err = verify(from(rechained))
	require.ErrorIs(t, err, audit.ErrRereadDiffers)
	require.False(t, errors.As(err, &ve), "not the log's failure: %v", err)

	// A reading that ends before the facts verified do: what it read
	// cannot be checked, and is not given to the fold.
	err = verify(from(log[:len(log)-2]))
	require.ErrorIs(t, err, audit.ErrRereadDiffers)

	// One that skips a fact, or gives one twice, breaks the chain.
	skipped := append(append([]facts.Fact(nil), log[:3]...), log[4:]...)
	err = verify(from(skipped))
	require.ErrorIs(t, err, audit.ErrRereadDiffers)
	twice := append(append([]facts.Fact(nil), log[:4]...), log[3:]...)
	err = verify(from(twice))
	require.ErrorIs(t, err, audit.ErrRereadDiffers)

	// A reading that fails is that failure.
	broken := errors.New("disk on fire")
	err = verify(func(yield func(facts.Fact, error) bool) { yield(facts.Fact{}, broken) })
	require.ErrorIs(t, err, broken)
	require.False(t, errors.As(err, &ve), "not the log's failure: %v", err)
}

// A lean verifier keeps a hash only every so many facts: a log read
// again across several of them is checked at each, so a change anywhere
// in a long log — chained again up to the next kept hash, or past it, or
// a reading cut between two kept hashes — fails as in a short one, and
// a faithful reading of a long log verifies.
func TestLeanRereadOfALongLog(t *testing.T) {
	actor := harnesstest.NewStock(t, harnesstest.TextScript).Stock.Actor
	log := goodLog(t)
	draft := func(kind facts.Kind, cause string, payload any) facts.Fact {
		d, err := facts.NewDraft(kind, cause, payload)
		require.NoError(t, err)
		return facts.Fact{Thread: log[0].Thread, At: log[0].At, Kind: d.Kind, Cause: d.Cause, Data: d.Data}
	}
	// While turn 1's call waits for its answer, the person changes the
	// policy, past three kept hashes (one every 64 facts); at the end, a
	// late approval of that call, which the lean fold reads the log
	// again to judge — through the policy changes, to the answer.
	asked := slices.IndexFunc(log, func(f facts.Fact) bool { return f.Kind == facts.KindConfirmationRequested })
	require.GreaterOrEqual(t, asked, 0)
	var long []facts.Fact
	long = append(long, log[:asked+1]...)
	for i := range 200 {
		long = append(long, draft(facts.KindPolicySet, fmt.Sprintf("ingress/policy-%d", i), facts.PolicySet{Approve: "ask", By: "ana"}))
	}
	long = append(long, log[asked+1:]...)
	long = append(long, draft(facts.KindConfirmationAnswered, "ingress/late-approval", facts.ConfirmationAnswered{RequestID: "1-call_1", Approved: true, By: "ana"}))
	for i := range long {
		long[i].Seq = uint64(i + 1)
		long[i].Prev = facts.Hash{}
		if i > 0 {
			long[i].Prev = long[i-1].Hash()
		}
	}
	log = long
	require.Greater(t, len(log), 3*64)

	verify := func(reread []facts.Fact) error {
		v := audit.NewVerifier(actor, log[0].Thread)
		v.Lean(fold.SourceFunc(func(from uint64) iter.Seq2[facts.Fact, error] {
			return func(yield func(facts.Fact, error) bool) {
				for _, f := range reread {
					if f.Seq >= from && !yield(f, nil) {
						return
					}
				}
			}
		}))
		for _, f := range log {
			if err := v.Add(f); err != nil {
				return err
			}
		}
		return v.End()
	}
	var ve *audit.VerifyError
	err := verify(log)
	require.ErrorAs(t, err, &ve, "a faithful reading verifies as a whole fold does")
	require.Contains(t, err.Error(), "request already answered")

	// changed is the log with fact i's cause changed and chained again
	// through fact through (0-based), as one who rewrote the store would.
	changed := func(i, through int) []facts.Fact {
		c := append([]facts.Fact(nil), log...)
		c[i].Cause += "x"
		for j := i + 1; j <= through; j++ {
			c[j].Prev = c[j-1].Hash()
		}
		return c
	}
	for _, tc := range []struct {
		name        string
		i, through  int
		readingUpTo int // the reading's length; 0 is all of it
	}{
		{name: "before the first kept hash, chained to it", i: 10, through: 63},
		{name: "before the first kept hash, chained past it", i: 10, through: 100},
		{name: "between kept hashes, chained to the next", i: 70, through: 127},
		{name: "between kept hashes, chained to the end", i: 70, through: len(log) - 1},
		{name: "after the last kept hash, chained to the end", i: 200, through: len(log) - 1},
		{name: "a kept hash's own fact", i: 127, through: 127},
		{name: "a reading cut between two kept hashes", i: 0, through: -1, readingUpTo: 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reread := log
			if tc.through >= 0 {
				reread = changed(tc.i, tc.through)
			}
			if tc.readingUpTo > 0 {
				reread = reread[:tc.readingUpTo]
			}
			err := verify(reread)
			require.ErrorIs(t, err, audit.ErrRereadDiffers)
			require.False(t, errors.As(err, &ve), "not the log's failure: %v", err)
		})
	}
}

// goodLog is testdata/corrupt/good.jsonl's log, which verifies.
func goodLog(t *testing.T) []facts.Fact {
	t.Helper()
	raw, err := os.Open(filepath.Join("..", "testdata", "corrupt", "good.jsonl"))
	require.NoError(t, err)
	defer raw.Close()
	log, err := facts.ParseJSON(raw)
	require.NoError(t, err)
	return log
}
