package stock

import (
	"context"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
)

// VerifyingReplayer tells a thread's record back and verifies its log in
// one reading of it (audit.VerifyReplayTreeEach, with a teller): it
// returns the tree, what the verifier says (verify) and why the record
// could not be told whole (err).
type VerifyingReplayer func(ctx context.Context, store thread.Store, actor harness.Actor, id string) (t audit.TreeAudit, verify, err error)

// ReplayVerified is Replay with verify, the log verified and told back in
// one reading and one fold of it by replay (nil:
// audit.VerifyReplayTreeEach, the entries kept), so that a long
// log is held once, not twice one after the other. The seals are checked
// as Replay checks them.
func (s *Session) ReplayVerified(ctx context.Context, id string, c SealCheck, replay VerifyingReplayer) Replayed {
	var r Replayed
	if s.Store == nil {
		r.Err = ErrSessionClosed
		return r
	}
	if replay == nil {
		replay = func(ctx context.Context, store thread.Store, actor harness.Actor, id string) (audit.TreeAudit, error, error) {
			var entries []audit.AuditEntry
			t, verify, err := audit.VerifyReplayTreeEach(ctx, store, actor, id, func(e audit.AuditEntry) error {
				entries = append(entries, e)
				return nil
			})
			t.Audit.Entries = entries
			return t, verify, err
		}
	}
	r.Verified = true
	r.Tree, r.Verify, r.Err = replay(ctx, s.Store, s.Stock.Actor, id)
	r.Seals, r.SealsErr = s.Place.VerifySeals(ctx, s.opts.Getenv, s.Store, id, c)
	return r
}
