package ask

import (
	"context"
	"sync"
)

// Serial asks, one at a time, the questions that come while something
// runs (a drive of a thread: an MCP server's questions during its
// actions), each under a context that ends when the run does, or when
// the terminal is wanted for something else (Settle). A nil Serial asks
// nothing.
type Serial struct {
	// mu guards what follows: the context of the run (nil: nothing
	// runs, and nothing is asked), and the cancels of the questions
	// being asked.
	mu      sync.Mutex
	ctx     context.Context
	cancels map[int]context.CancelFunc
	n       int
	wg      sync.WaitGroup

	// one is held while a question is asked: one at a time.
	one sync.Mutex
}

// Begin lets questions be asked while the run of ctx goes on.
func (s *Serial) Begin(ctx context.Context) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
}

// End stops asking: the questions being asked are let go of (their
// contexts end), and no more are.
func (s *Serial) End() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.ctx = nil
	s.mu.Unlock()
	s.Settle()
}

// Settle lets go of the questions being asked and waits for their asks
// to return: the terminal is then the caller's.
func (s *Serial) Settle() {
	if s == nil {
		return
	}
	s.mu.Lock()
	for _, cancel := range s.cancels {
		cancel()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Go asks with fn, on a goroutine of its own, once no other question is
// being asked, under a context that ends at Settle or End or when the
// run's does. It reports false, asking nothing, when no run goes on.
func (s *Serial) Go(fn func(ctx context.Context)) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil {
		return false
	}
	ctx, cancel := context.WithCancel(s.ctx)
	if s.cancels == nil {
		s.cancels = map[int]context.CancelFunc{}
	}
	s.n++
	k := s.n
	s.cancels[k] = cancel
	s.wg.Go(func() {
		defer func() {
			s.mu.Lock()
			delete(s.cancels, k)
			s.mu.Unlock()
			cancel()
		}()
		s.one.Lock()
		defer s.one.Unlock()
		fn(ctx)
	})
	return true
}
