package harness

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// InDoubt is the state Effects gives an action that started and has no
// completion: the process running it died (no process can hold it while
// the store is open here), and no resume has recorded it yet.
const InDoubt facts.EffectState = "in_doubt"

// Effect is one action of a thread as the log records it.
type Effect struct {
	Thread   string
	ActionID string
	// Tool is the adapter the action ran on.
	Tool string
	// Seq is the seq of the action's latest record: its completion, its
	// interruption, or its start.
	Seq uint64
	At  time.Time
	// State is the effect state of the completion; for an action that
	// never completed, InDoubt.
	State facts.EffectState
	// Report is the adapter's reported status, when it completed.
	Report facts.ReportStatus
	// Check is the declared check's verdict, if one was recorded.
	Check facts.Verdict
	// Changed are the paths the runtime observed change.
	Changed []string
	// Open is true while a person must settle the effect: unknown, or in
	// doubt, and not reconciled.
	Open bool
	// Decision is how a person settled it, if they did.
	Decision facts.Decision
}

// Effects lists the actions of every thread in the store, with their
// effect state: open ones first, then by thread and seq. It reads the logs
// and runs nothing.
func Effects(ctx context.Context, store thread.Store) ([]Effect, error) {
	var out []Effect
	page := thread.ThreadsPage{}
	for {
		heads, err := store.Threads(ctx, page)
		if err != nil {
			return nil, fmt.Errorf("effects: %w", err)
		}
		if len(heads) == 0 {
			break
		}
		for _, h := range heads {
			es, err := ThreadEffects(ctx, store, h.Thread)
			if err != nil {
				return nil, err
			}
			out = append(out, es...)
		}
		page.After = heads[len(heads)-1].Thread
	}
	slices.SortStableFunc(out, func(a, b Effect) int {
		if a.Open != b.Open {
			if a.Open {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Thread, b.Thread), cmp.Compare(a.Seq, b.Seq))
	})
	return out, nil
}

// ThreadEffects lists the actions of one thread, in the order they were
// requested.
func ThreadEffects(ctx context.Context, store thread.Store, id string) ([]Effect, error) {
	var out []*Effect
	byID := map[string]*Effect{}
	for f, err := range store.Read(ctx, id, 1) {
		if err != nil {
			return nil, fmt.Errorf("effects of %s: %w", id, err)
		}
		var err error
		switch f.Kind {
		case facts.KindActionRequested:
			var p facts.ActionRequested
			if p, err = facts.Decode[facts.ActionRequested](f); err == nil {
				e := &Effect{Thread: id, ActionID: p.ActionID, Tool: p.Adapter, Seq: f.Seq, At: f.At}
				byID[p.ActionID] = e
				out = append(out, e)
			}
		case facts.KindActionStarted:
			var p facts.ActionStarted
			if p, err = facts.Decode[facts.ActionStarted](f); err == nil {
				if e := byID[p.ActionID]; e != nil {
					e.Seq, e.At, e.State, e.Open = f.Seq, f.At, InDoubt, true
				}
			}
		case facts.KindActionCompleted:
			var p facts.ActionCompleted
			if p, err = facts.Decode[facts.ActionCompleted](f); err == nil {
				if e := byID[p.ActionID]; e != nil {
					e.Seq, e.At, e.State, e.Report = f.Seq, f.At, p.EffectState, p.Report.Status
					e.Open = p.EffectState == facts.EffectUnknown
					for _, c := range p.Observation.Changed {
						e.Changed = append(e.Changed, c.Path)
					}
				}
			}
		case facts.KindActionInterrupted:
			var p facts.ActionInterrupted
			if p, err = facts.Decode[facts.ActionInterrupted](f); err == nil {
				if e := byID[p.ActionID]; e != nil {
					e.Seq, e.At, e.State, e.Open = f.Seq, f.At, InDoubt, true
					for _, c := range p.Changed {
						e.Changed = append(e.Changed, c.Path)
					}
				}
			}
		case facts.KindCheckRecorded:
			var p facts.CheckRecorded
			if p, err = facts.Decode[facts.CheckRecorded](f); err == nil {
				if e := byID[p.ActionID]; e != nil {
					e.Check = p.Verdict
				}
			}
		case facts.KindEffectReconciled:
			var p facts.EffectReconciled
			if p, err = facts.Decode[facts.EffectReconciled](f); err == nil {
				if e := byID[p.ActionID]; e != nil && e.Open {
					e.Open, e.Decision = false, p.Decision
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("effects of %s: %w", id, err)
		}
	}
	res := make([]Effect, len(out))
	for i, e := range out {
		res[i] = *e
	}
	return res, nil
}
