package audit_test

import (
	"errors"
	"iter"
	"os"
	"path/filepath"
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
	raw, err := os.Open(filepath.Join("..", "testdata", "corrupt", "good.jsonl"))
	require.NoError(t, err)
	log, err := facts.ParseJSON(raw)
	raw.Close()
	require.NoError(t, err)
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
