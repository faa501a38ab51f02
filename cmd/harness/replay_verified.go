package main

import (
	"bufio"
	"context"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/tell"
	"github.com/seed-7cc7a084/harness/thread"
)

// replayToldVerified is replayTold with the log verified in the same
// reading (audit.VerifyReplayTreeEach): `replay --verify` holds one fold
// of a long log, not two one after the other.
func (a *app) replayToldVerified(ctx context.Context, store thread.Store, actor harness.Actor, id string) (audit.TreeAudit, error, error) {
	w := bufio.NewWriter(a.stdout)
	started := false
	tree, verify, err := audit.VerifyReplayTreeEach(ctx, store, actor, id, func(e audit.AuditEntry) error {
		if !started {
			tell.AuditHead(w, id)
			started = true
		}
		tell.AuditEntry(w, e, a.paint)
		return nil
	})
	if err == nil {
		tell.AuditEnd(w, tree.Audit)
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return tree, verify, err
}
