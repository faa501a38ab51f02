package stock

import (
	"context"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/seal"
	"github.com/seed-7cc7a084/harness/thread"
)

// Replayed is a thread's record told back (audit.ReplayTree) and, when it
// was verified, what the check of its log and of its seals found.
type Replayed struct {
	// Tree is the thread's audit and its children's; Err why it could
	// not be told whole.
	Tree audit.TreeAudit
	Err  error
	// Verified says the log and the seals were checked: Verify is the
	// log's failure (audit.VerifyLog; nil: it verified), Seals what its
	// seals say, SealsErr why they could not be read.
	Verified bool
	Verify   error
	Seals    seal.Report
	SealsErr error
}

// Replayer tells a thread's record back: audit.ReplayTree, or one that
// also tells each entry as it is replayed.
type Replayer func(ctx context.Context, store thread.Store, actor harness.Actor, id string) (audit.TreeAudit, error)

// Replay tells the thread id's record back as the session's actor folds
// it, through replay (nil: audit.ReplayTree); with verify it also checks
// the log (audit.VerifyLog) and the seals of its head
// (Place.VerifySeals, as c says whose to trust and where else to look),
// each failure kept in the result rather than returned.
func (s *Session) Replay(ctx context.Context, id string, verify bool, c SealCheck, replay Replayer) Replayed {
	var r Replayed
	if s.Store == nil {
		r.Err = ErrSessionClosed
		return r
	}
	if verify {
		r.Verified = true
		r.Verify = audit.VerifyLog(ctx, s.Store, s.Stock.Actor, id)
		r.Seals, r.SealsErr = s.Place.VerifySeals(ctx, s.opts.Getenv, s.Store, id, c)
	}
	if replay == nil {
		replay = audit.ReplayTree
	}
	r.Tree, r.Err = replay(ctx, s.Store, s.Stock.Actor, id)
	return r
}
