package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// asker is the action.Ask of the transition key run in thread id: an
// action's question (an MCP server's elicitation) is appended to the
// thread under the action's own cause (scheduler.ElicitCause), where the
// thread's readers see it as a wait, and its answer is read from the log,
// posted by any front end. Only the action the transition runs may ask.
func (rt *Runtime) asker(id, key string) action.Elicit {
	var mu sync.Mutex // guards n and waiting
	n := 0
	waiting := false
	return func(ctx context.Context, q facts.QuestionAsked) (facts.QuestionAnswered, error) {
		if q.Elicit == nil {
			return facts.QuestionAnswered{}, fmt.Errorf("ask in %s: %w: only an action's server asks here", id, ErrNotAsked)
		}
		actionID := q.Elicit.ActionID
		if rt.NoAsk != "" {
			return facts.QuestionAnswered{}, fmt.Errorf("ask in %s: %w: %s", id, ErrNotAsked, rt.NoAsk)
		}
		if !scheduler.MayAsk(key, actionID) {
			return facts.QuestionAnswered{}, fmt.Errorf("ask in %s: action %s does not run under %s: %w", id, actionID, key, ErrNotAsked)
		}
		// One question of the action waits at a time: a server that
		// sends its requests at once (they are handled concurrently)
		// would otherwise fill the log with questions nobody answered.
		mu.Lock()
		if waiting {
			mu.Unlock()
			return facts.QuestionAnswered{}, fmt.Errorf("ask in %s: a question of action %s waits for a person already: %w", id, actionID, ErrNotAsked)
		}
		waiting = true
		mu.Unlock()
		defer func() {
			mu.Lock()
			waiting = false
			mu.Unlock()
		}()
		var seq uint64
		for {
			mu.Lock()
			if n >= maxAsks {
				mu.Unlock()
				return facts.QuestionAnswered{}, fmt.Errorf("ask in %s: action %s has put %d questions, all it may: %w", id, actionID, maxAsks, ErrNotAsked)
			}
			n++
			k := n
			mu.Unlock()
			q.RequestID = scheduler.ElicitRequest(actionID, k)
			d, err := facts.NewDraft(facts.KindQuestionAsked, scheduler.ElicitCause(actionID, k), q)
			if err != nil {
				return facts.QuestionAnswered{}, fmt.Errorf("ask in %s: %w", id, err)
			}
			seq, err = rt.appendAtHead(ctx, id, d)
			if errors.Is(err, thread.ErrDuplicateCause) {
				continue // asked before this process ran the action
			}
			if err != nil {
				return facts.QuestionAnswered{}, fmt.Errorf("ask in %s: %w", id, err)
			}
			break
		}
		if out := action.OutputOf(ctx); out != nil {
			// Front ends showing the thread's progress (a terminal) say
			// it at once.
			if b, err := json.Marshal(q); err == nil {
				out(id, actionID, action.StreamAsked, b)
			}
		}
		after := seq
		tick := time.NewTimer(stopPoll)
		defer tick.Stop()
		for {
			f, ok := thread.FirstAfter(ctx, rt.Store, id, &after, func(f facts.Fact) bool {
				if f.Kind != facts.KindQuestionAnswered {
					return false
				}
				p, err := facts.Decode[facts.QuestionAnswered](f)
				return err == nil && p.RequestID == q.RequestID
			})
			if ok {
				return facts.Decode[facts.QuestionAnswered](f)
			}
			select {
			case <-ctx.Done():
				return facts.QuestionAnswered{}, ctx.Err()
			case <-tick.C:
				tick.Reset(stopPoll)
			}
		}
	}
}

// maxAsks bounds the questions one action's run may put (those a process
// that ran it before put count too), one waiting at a time.
const maxAsks = 100

// appendAtHead appends d at the thread's head, whatever it is now (a
// fact of a running action: the runtime's own record of the action
// follows it, see append), and returns its seq.
func (rt *Runtime) appendAtHead(ctx context.Context, id string, d facts.Draft) (uint64, error) {
	for {
		h, err := rt.Store.Head(ctx, id)
		if err != nil {
			return 0, err
		}
		got, err := rt.Store.Append(ctx, id, h.Seq, d)
		var conflict *thread.ConflictError
		switch {
		case err == nil:
			return got.Seq, nil
		case errors.As(err, &conflict), errors.Is(err, thread.ErrConflict):
			continue
		default:
			return 0, err
		}
	}
}
