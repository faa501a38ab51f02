package worker

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// OnSession is a worker that drives the threads of the session s, whose
// open store is a NATS store the workers share, and that store: the
// queue is its work stream, and each thread is
// folded and driven with the session's actor, runtimes and approval.
// flags, the worker's own command line, amend each thread's policy as a
// resume with them records it (stock.Amender). o gives the rest
// (LoadModel, Concurrency, Drain, Log, ...); its Store, Queue, Actor,
// Runtime, Approval and AmendPolicy are the session's; its Progress,
// when not set, publishes on that store (stock.PublishProgress), so a
// server following the store shows the threads' live output.
//
// On a store in a directory that a harness server holds (the session's
// store goes through its socket) the queue is the server's
// (socketstore.Client.Work), shared with the server's own process, and
// the threads' live output goes to the server; the NATS store returned
// is nil. Any other store is ErrNotShared.
func OnSession(ctx context.Context, s *stock.Session, flags stock.SettingsSource, o Options) (*Worker, *natsstore.Store, error) {
	for _, st := range []thread.Store{s.Store, s.Store.Backing()} {
		if c, ok := st.(*socketstore.Client); ok {
			w, err := onSocket(ctx, s, c, flags, o)
			return w, nil, err
		}
	}
	ns, ok := s.Store.(*natsstore.Store)
	if !ok {
		return nil, nil, fmt.Errorf("worker: the store of %s is %w", s.Place.Where(), ErrNotShared)
	}
	work, err := ns.Work(ctx)
	if err != nil {
		return nil, nil, err
	}
	o.Store, o.Queue, o.Actor = s.Store, FromWork(work), s.Stock.Actor
	o.Runtime = func(string) (*harness.Runtime, func(), error) { return s.Runtime() }
	o.Approval, o.AmendPolicy = s.Approval, stock.Amender(flags)
	if o.Progress == nil {
		o.Progress = stock.PublishProgress(ns)
	}
	w, err := New(o)
	return w, ns, err
}
