package drive

import (
	"fmt"

	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// Binds reports whether the approval r can be posted to the confirmation
// p as it waits now: p is open (its call's digest known) and r names that
// call's digest, or none. A rule that comes with the approval (Always, a
// project's rule) is kept only once this holds: an approval refused —
// for a call no longer waiting, or another call than the one shown — keeps
// nothing either. It wraps scheduler.ErrUnknownRequest or
// scheduler.ErrDigest.
func (r Reply) Binds(p Pending) error {
	if p.Kind != fold.WaitConfirmation || p.Digest == "" {
		return fmt.Errorf("confirmation %s is not waiting, so no rule comes with its approval: %w", Ref(p), scheduler.ErrUnknownRequest)
	}
	if r.Digest != "" && r.Digest != p.Digest {
		return fmt.Errorf("confirmation %s: digest %s, the call waiting has %s, so no rule comes with the approval: %w", Ref(p), r.Digest, p.Digest, scheduler.ErrDigest)
	}
	return nil
}
