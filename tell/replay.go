package tell

import (
	"bufio"
	"context"
	"io"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// ReplayTold is a replay (stock.Replayer) that tells the thread's audit
// on w as its log is replayed (audit.ReplayTreeEach), entry by entry,
// through a buffer, so that no entry is kept: Audit told as it goes. It
// returns the tree with its children's audits, to tell after; the
// thread's status is told last, when the replay did not fail.
func ReplayTold(w io.Writer, paint Paint) stock.Replayer {
	return func(ctx context.Context, store thread.Store, actor harness.Actor, id string) (audit.TreeAudit, error) {
		bw := bufio.NewWriter(w)
		started := false
		tree, err := audit.ReplayTreeEach(ctx, store, actor, id, func(e audit.AuditEntry) error {
			if !started {
				AuditHead(bw, id)
				started = true
			}
			AuditEntry(bw, e, paint)
			return nil
		})
		if err == nil {
			AuditEnd(bw, tree.Audit)
		}
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
		return tree, err
	}
}

// ReplayVerifiedTold is ReplayTold with the log verified in the same
// reading (audit.VerifyReplayTreeEach): `replay --verify` holds one fold
// of a long log, not two one after the other.
func ReplayVerifiedTold(w io.Writer, paint Paint) stock.VerifyingReplayer {
	return func(ctx context.Context, store thread.Store, actor harness.Actor, id string) (audit.TreeAudit, error, error) {
		bw := bufio.NewWriter(w)
		started := false
		tree, verify, err := audit.VerifyReplayTreeEach(ctx, store, actor, id, func(e audit.AuditEntry) error {
			if !started {
				AuditHead(bw, id)
				started = true
			}
			AuditEntry(bw, e, paint)
			return nil
		})
		if err == nil {
			AuditEnd(bw, tree.Audit)
		}
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
		return tree, verify, err
	}
}
