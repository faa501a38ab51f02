package serve

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
)

// run is the server's resume of one thread: one at a time per thread; a
// resume asked for while one runs runs again after it (again), since what
// was asked for may have come after it last looked.
type run struct {
	active bool
	again  bool
	failed string // how the last one failed, for the page
}

// ErrNotHere: the server resumes only the threads of its own workspace.
var ErrNotHere = errors.New("the thread works in another workspace")

// ErrDrivenElsewhere: another process drives the thread (it runs its
// actions): it takes up what is posted itself, and a resume here would
// only wait for it.
var ErrDrivenElsewhere = errors.New("another process drives the thread")

// Resume has the server drive the thread on in the background (see
// drive.Drive), as a person's word to go on: until it is done, failed or
// stopped, or waits for a person. It returns at once; a thread the server
// is resuming already is resumed again once that resume ends. A thread of
// another workspace is ErrNotHere. A child thread (see the delegate
// tool) runs only as its parent drives it: resuming one resumes the root
// of its tree. A thread another process drives (drive.StatusRunning) is
// ErrDrivenElsewhere.
func (s *Server) Resume(ctx context.Context, id string) error {
	root, err := harness.RootOf(ctx, s.store, id)
	if err != nil {
		return err
	}
	st, err := s.inspect(ctx, root)
	if err != nil && root != id {
		return fmt.Errorf("the root %s of %s: %w", root, id, err)
	}
	if err != nil {
		return err
	}
	id = root
	if !s.here(st.Workspace) {
		return fmt.Errorf("thread %s works in %s, not here (%s): %w; a command or a server there resumes it", id, st.Workspace, s.opts.Stock.Config.Workspace, ErrNotHere)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("the server is stopping")
	}
	r := s.runs[id]
	if r == nil {
		r = &run{}
		s.runs[id] = r
	}
	if r.active {
		r.again = true
		return nil
	}
	if st.Status == drive.StatusRunning {
		return fmt.Errorf("thread %s runs %s: %w; it takes up what is posted itself (stop it to end it)", id, present.EscapeLine(strings.Join(st.Running, ", ")), ErrDrivenElsewhere)
	}
	r.active, r.failed = true, ""
	s.wg.Add(1)
	go s.resumeLoop(id, r)
	return nil
}

// resuming reports whether the server is resuming the thread.
func (s *Server) resuming(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[id]
	return r != nil && r.active
}

// lastResume is how the server's last resume of the thread failed, or "".
func (s *Server) lastResume(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.runs[id]; r != nil {
		return r.failed
	}
	return ""
}

func (s *Server) resumeLoop(id string, r *run) {
	defer s.wg.Done()
	for {
		st, err := s.drive(s.ctx, id)
		s.mu.Lock()
		switch {
		case err != nil && s.ctx.Err() == nil:
			r.failed = present.EscapeLine(err.Error())
			s.opts.Logf("resume %s: %v", id, err)
		case err == nil:
			s.opts.Logf("thread %s %s (seq %d)", id, st.Status, st.Head.Seq)
		}
		if r.again && s.ctx.Err() == nil {
			r.again = false
			s.mu.Unlock()
			continue
		}
		r.active = false
		if r.failed == "" {
			delete(s.runs, id)
		}
		s.mu.Unlock()
		return
	}
}

// drive drives the thread on with a runtime of its own: the stock
// harness's tools and an observer of the workspace, the model the thread
// recorded (loaded when a turn is due), the server's approval policy.
func (s *Server) drive(ctx context.Context, id string) (drive.State, error) {
	st := s.opts.Stock
	rt, free, err := s.session.Runtime(stock.WithObserver(action.WithChangeFeed(true)))
	if err != nil {
		return drive.State{}, err
	}
	defer free()
	approval := s.opts.Approval
	if approval.Resolve == nil && st.Tools != nil {
		approval.Resolve = st.Tools.Resolve
	}
	defer s.live.done(id) // what it kept for later streams is recorded now
	return drive.Drive(ctx, rt.Thread(st.Actor, id), drive.Options{
		Approval: approval,
		Policy:   s.opts.Policy,
		Retry:    true,
		Progress: s.live.progress(id),
		LoadModel: func(recorded string) (model.Model, error) {
			if recorded == "" {
				return nil, fmt.Errorf("thread %s needs a model turn and records no model", id)
			}
			return s.opts.LoadModel(recorded)
		},
	})
}
