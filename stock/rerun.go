package stock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/rerun"
	"github.com/seed-7cc7a084/harness/search"
	"github.com/seed-7cc7a084/harness/thread"
)

// Rerun is a rerun as a front end asks for it (see package rerun): the
// model and the overrides, and the threads named as a person names them —
// ids, every thread of a status, the threads a search finds — or a rerun
// to go on with.
type Rerun struct {
	// Model is the model the reruns run on; the session's Model is its
	// spec, as the reruns record it.
	Model model.Model
	// Threads are the threads to rerun; with All every thread that is
	// no rerun (of Status, when set); with Query the threads a search
	// finds (SearchWait bounds the wait for its index).
	Threads    []string
	All        bool
	Status     harness.Status
	Query      string
	SearchWait time.Duration
	// Again, when set, is a rerun to go on with as it was begun: its
	// original, recorded model spec, overrides and scratch copy; Threads,
	// As and Live are its own then.
	Again string
	// As names the rerun of one thread (default rerun.ID).
	As string
	// Live goes on past the divergence in a scratch copy of the
	// workspace (one thread); Approval answers what it runs (nil: every
	// confirmation parks it).
	Live     bool
	Approval *drive.Approval
	// SystemPrompt, when not nil, is offered instead of the original's;
	// the session must be opened with it (Rerun.SessionOptions).
	SystemPrompt []byte
	// Instructions, Tools and WithoutTools are rerun.Options' overrides.
	Instructions []byte
	Tools        []string
	WithoutTools []string
	// Concurrency is how many reruns of a suite run at once (at least 1).
	Concurrency int
	// OnScratch is told, before a live rerun runs, the scratch copy it
	// acts in (again: the one it went on in before); OnRow each row of a
	// suite as it is done. Either may be nil.
	OnScratch func(id, dir string, again bool)
	OnRow     func(rerun.Row)
}

// RerunResult is what a rerun gives: the report of one thread's rerun
// (From is its original), or the rows of a suite (never nil for one),
// with the model spec and key they ran under.
type RerunResult struct {
	Report *rerun.Report
	From   string
	Rows   []rerun.Row
	Model  string
	Key    string
}

// SessionOptions are the options of the session a rerun runs in, its
// model spec found from dir: a session that drives, with the model named
// (the settings' when spec is empty) and the system prompt overridden.
func (r Rerun) SessionOptions(spec, dir string) SessionOptions {
	so := SessionOptions{Drive: true, Model: ModelNeeded, ModelSpec: spec, ModelDir: dir}
	if r.SystemPrompt != nil {
		prompt := string(r.SystemPrompt)
		so.Harness = append(so.Harness, func(c *harness.Config) { c.SystemPrompt = prompt })
	}
	return so
}

// Rerun runs r in the session, whose store is open. A single thread's
// rerun returns its report even with an error (a live rerun that failed
// midway); an unknown thread is harness.ErrUnknownThread, an override the
// original does not allow rerun.ErrOverride, a scratch copy that cannot
// be gone on in rerun.ErrScratch, a bad query search.ErrQuery.
func (s *Session) Rerun(ctx context.Context, r Rerun) (RerunResult, error) {
	res := RerunResult{Model: s.Model}
	rt, free, err := s.Runtime(WithModel(r.Model))
	if err != nil {
		return res, err
	}
	defer free()
	opts := rerun.Options{Model: s.Model, Live: r.Live, Runtime: rt, Actor: s.Stock.Actor,
		Asks: Asks(rt.Services.Tools), WithoutTools: r.WithoutTools}
	if r.SystemPrompt != nil {
		opts.Overrides = append(opts.Overrides, rerun.SystemPromptOverride(r.SystemPrompt))
	}
	if r.Tools != nil {
		opts.Tools = append([]string{}, r.Tools...)
	}
	if r.Instructions != nil {
		opts.Instructions = append([]byte{}, r.Instructions...)
	}
	ids := r.Threads
	if r.Again != "" {
		if opts, err = rerun.Again(ctx, s.Store, rt.Services.Blobs, r.Again, opts); err != nil {
			return res, err
		}
		ids, r.As, r.Live, r.All, r.Query = []string{opts.From}, r.Again, opts.Live, false, ""
	}
	res.Key = rerun.KeyOf(opts)
	if len(ids) == 1 && !r.All && r.Query == "" {
		res.From = ids[0]
	}
	if r.Live {
		if len(ids) != 1 {
			return res, fmt.Errorf("%w: a live rerun reruns one thread", rerun.ErrLiveRefused)
		}
		lfree, err := s.live(ctx, &opts, r, ids[0])
		if err != nil {
			return res, err
		}
		defer lfree()
	}
	if res.From != "" {
		if err := s.threadThere(ctx, ids[0]); err != nil {
			return res, err
		}
		opts.From, opts.As = ids[0], r.As
		res.Report, err = rerun.Run(ctx, opts)
		return res, err
	}
	switch {
	case r.All:
		ids, err = rerun.Select(ctx, rt, s.Stock.Actor, r.Status)
	case r.Query != "":
		var ix *search.Index
		if ix, err = s.Place.OpenSearch(ctx, max(r.SearchWait, search.DefaultWait)); err != nil {
			return res, err
		}
		defer ix.Close()
		ids, err = rerun.Find(ctx, rt, s.Stock.Actor, ix, r.Query)
	}
	if err != nil {
		return res, err
	}
	res.Rows, err = rerun.Suite(ctx, rerun.SuiteOptions{Options: opts, Threads: ids, Concurrency: max(r.Concurrency, 1), OnRow: r.OnRow})
	if res.Rows == nil {
		res.Rows = []rerun.Row{}
	}
	return res, err
}

// live makes opts a live rerun of from: its runtime acts in the rerun's
// scratch copy (the one it went on in before, or a new one), a copy of
// the session's workspace less its store.
func (s *Session) live(ctx context.Context, opts *rerun.Options, r Rerun, from string) (free func(), err error) {
	id := r.As
	if id == "" {
		id = rerun.ID(from, rerun.KeyOf(*opts))
	}
	scratch, err := rerun.ScratchOf(ctx, s.Store, id)
	if err != nil {
		return nil, err
	}
	again := scratch != ""
	if !again {
		if scratch, err = os.MkdirTemp("", "harness-rerun-"); err != nil {
			return nil, err
		}
	}
	rt, actor, free, err := s.RuntimeIn(scratch, WithModel(r.Model))
	if err != nil {
		return nil, err
	}
	approval := r.Approval
	if approval == nil {
		approval = &drive.Approval{Mode: drive.ApproveAsk}
	}
	opts.Runtime, opts.Actor, opts.Approval = rt, actor, approval
	opts.Source, opts.Skip = s.Place.Root, []string{s.Place.Store}
	if r.OnScratch != nil {
		r.OnScratch(id, scratch, again)
	}
	return free, nil
}

// threadThere is harness.ErrUnknownThread, naming the store, when the
// session's store holds no thread id.
func (s *Session) threadThere(ctx context.Context, id string) error {
	if _, err := s.Store.Head(ctx, id); errors.Is(err, thread.ErrNotFound) {
		return fmt.Errorf("thread %q: %w in %s", id, harness.ErrUnknownThread, s.Place.Where())
	} else if err != nil {
		return err
	}
	return nil
}

// Asks says whether a call to a tool of tb is put to a person: the tool's
// own word (a tool that says whether it confirms), else the default
// policy for its capability. An unknown tool asks nobody.
func Asks(tb *harness.Toolbox) func(string) bool {
	return func(name string) bool {
		t, ok := tb.Lookup(name)
		if !ok {
			return false
		}
		if c, ok := t.(interface{ Confirm() bool }); ok {
			return c.Confirm()
		}
		return action.AskDefault.Asks(t.Capability())
	}
}
