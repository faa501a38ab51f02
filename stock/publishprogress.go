package stock

import (
	"context"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// PublishProgress is, for a process that drives threads of the NATS
// store ns (a worker), where the progress of a drive of thread root goes
// while held — the context that holds root's lease — is live: each event
// is published on core NATS (see natsstore.Store.Progress and
// drive.EncodeEvent), so that a server following the store
// (serve.New does when its store is on NATS) shows what the thread does
// on its page and API. It never waits, and nothing of it is recorded. A
// question a running action asks (drive.EventAsked) is not published:
// the question.asked fact carries it to every front end. It is nil when
// held holds no lease of root from ns.
func PublishProgress(ns *natsstore.Store) func(held context.Context, root string) drive.Progress {
	return func(held context.Context, root string) drive.Progress {
		pub := ns.Progress(held, root)
		if pub == nil {
			return nil
		}
		return func(e drive.Event) {
			if e.Thread == "" || e.Kind == drive.EventAsked {
				return
			}
			if b, err := drive.EncodeEvent(e); err == nil {
				pub(e.Thread, b)
			}
		}
	}
}
