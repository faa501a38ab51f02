package main

import (
	"bufio"
	"context"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/tell"
	"github.com/seed-7cc7a084/harness/thread"
)

// replayTold tells a thread's audit on stdout as the log is replayed
// (audit.ReplayTreeEach), entry by entry, through a buffer, so that no
// entry is kept: it returns the tree with its children's audits, to tell
// after, and the thread's status, told last.
func (a *app) replayTold(ctx context.Context, store thread.Store, actor harness.Actor, id string) (audit.TreeAudit, error) {
	w := bufio.NewWriter(a.stdout)
	started := false
	tree, err := audit.ReplayTreeEach(ctx, store, actor, id, func(e audit.AuditEntry) error {
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
	return tree, err
}
