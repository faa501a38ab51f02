package stock

import (
	"context"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
)

// Stop stops the thread id as by's word, and why (drive.Stop): nothing
// more runs in it, and the children it waits on are stopped. show, when
// set, is given each fact appended meanwhile — the thread's and its
// children's — as it is appended (or the error of reading one back).
// Stop returns how the thread then stands and the facts appended.
func (s *Session) Stop(ctx context.Context, id, by, reason string, show func(facts.Fact, error)) (drive.State, []facts.Fact, error) {
	appended := []facts.Fact{}
	rt, free, err := s.Runtime(Watching(func(f facts.Fact, err error) {
		if err == nil {
			appended = append(appended, f)
		}
		if show != nil {
			show(f, err)
		}
	}))
	if err != nil {
		return drive.State{Thread: id}, nil, err
	}
	defer free()
	th, err := rt.Open(ctx, s.Stock.Actor, id)
	if err != nil {
		return drive.State{Thread: id}, appended, err
	}
	st, err := drive.Stop(ctx, th, by, reason)
	return st, appended, err
}
