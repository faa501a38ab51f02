package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// Taker is a taker of the jobs of a served store's queue
// (socketstore.Work): in the server's process (socketstore.Taker) or in
// another, through the socket (socketstore.RemoteWork).
type Taker interface {
	Take(ctx context.Context, n int, wait time.Duration, fn func(*socketstore.Job)) error
}

// FromTaker is the Queue of a taker of a served store's jobs. A job stays
// with its taker for as long as the taker is there (a connection, or the
// server's process), so the worker need not say it still works on one.
func FromTaker(t Taker) Queue { return takerQueue{t} }

type takerQueue struct{ t Taker }

func (q takerQueue) Take(ctx context.Context, n int, wait time.Duration, fn func(Job)) error {
	return q.t.Take(ctx, n, wait, func(j *socketstore.Job) { fn(servedJob{j}) })
}

func (q takerQueue) KeepEvery() time.Duration { return 0 }

type servedJob struct{ j *socketstore.Job }

func (j servedJob) Thread() string                             { return j.j.Thread }
func (j servedJob) Ingress() bool                              { return j.j.Ingress }
func (j servedJob) Delivered() uint64                          { return j.j.Delivered }
func (j servedJob) Followed(ctx context.Context) (bool, error) { return j.j.Followed(ctx) }
func (j servedJob) Done() error                                { return j.j.Done() }
func (j servedJob) Later(delay time.Duration) error            { return j.j.Later(delay) }
func (j servedJob) Working() error                             { return j.j.Working() }

// OnServer is a worker in the process of a harness server that holds the
// session's store (a store in a directory): it takes the jobs of the
// server's queue w, beside the workers of other processes (see OnSession),
// and drives each thread with the session's actor and runtimes — only the
// threads of the session's workspace (Options.Workspace), each decided by
// the policy it records, never by the server's flags (see below). The session's store is the one the server
// gives its own process, so that its streams see every append. o's
// Progress, when set, is where the server shows a thread's live output.
func OnServer(s *stock.Session, w *socketstore.Work, o Options) (*Worker, error) {
	o.Store, o.Queue, o.Actor = s.Store, FromTaker(w.Taker()), s.Stock.Actor
	o.Workspace = s.Stock.Config.Workspace // a shared store's threads of other workspaces are not this server's
	o.Runtime = func(string) (*harness.Runtime, func(), error) { return s.Runtime() }
	// The server's own approval (its flags, for the threads started on its
	// page) decides nothing here: a thread it takes up may be a person's,
	// run at a terminal, parked at a prompt. A thread is decided by the
	// policy it records (what it was submitted or started with, a
	// person's "always"); one that records none has every confirmation put
	// to a person — never wider than the settings' denies allow.
	o.Approval = drive.Approval{Mode: drive.ApproveAsk, Deny: s.Approval.Deny, Root: s.Approval.Root, Resolve: s.Approval.Resolve}
	o.Policy, o.AmendPolicy = nil, nil
	return New(o)
}

// onSocket is OnSession's worker on a store a harness server holds: it
// takes the server's jobs through its socket, and hands the threads'
// live output to the server.
func onSocket(ctx context.Context, s *stock.Session, c *socketstore.Client, flags stock.SettingsSource, o Options) (*Worker, error) {
	rw, err := c.Work(ctx)
	if err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	o.Store, o.Queue, o.Actor = s.Store, FromTaker(rw), s.Stock.Actor
	o.Workspace = s.Stock.Config.Workspace // a shared store's threads of other workspaces are not this worker's
	o.Runtime = func(string) (*harness.Runtime, func(), error) { return s.Runtime() }
	o.Approval, o.AmendPolicy = s.Approval, stock.Amender(flags)
	if o.Progress == nil {
		o.Progress = func(context.Context, string) drive.Progress { return s.ShareProgress(nil) }
	}
	return New(o)
}

// ServeWork has the server of a store in a directory look for the
// threads submitted while no server held the store (socketstore.Work's
// Scan), and, with o.Concurrency > 0, drive that many of the submitted
// threads at once in the background (OnServer, Start). stop ends the
// drives (they drain) and returns once they have; with no drives it does
// nothing.
func ServeWork(ctx context.Context, s *stock.Session, w *socketstore.Work, o Options) (stop func() error, err error) {
	if err := w.Scan(ctx); err != nil {
		return nil, err
	}
	if o.Concurrency == 0 {
		return func() error { return nil }, nil
	}
	wk, err := OnServer(s, w, o)
	if err != nil {
		return nil, err
	}
	return wk.Start(ctx), nil
}
