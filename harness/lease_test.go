package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// leased is a real Pebble store that also leases threads, the way a store
// processes share does (thread.Leaser), with a lease the test can take
// away — as a lease that could not be renewed in time is.
type leased struct {
	*thread.PebbleStore
	mu   sync.Mutex
	lose context.CancelCauseFunc
	// loseOnAppend loses the lease held when an append begins.
	loseOnAppend bool
}

func (l *leased) Append(ctx context.Context, id string, after uint64, drafts ...facts.Draft) (thread.Head, error) {
	l.mu.Lock()
	if l.loseOnAppend && l.lose != nil {
		l.lose(thread.ErrLeaseLost)
	}
	l.mu.Unlock()
	return l.PebbleStore.Append(ctx, id, after, drafts...)
}

func (l *leased) Lease(ctx context.Context, id string) (context.Context, func(), error) {
	held, cancel := context.WithCancelCause(ctx)
	l.mu.Lock()
	l.lose = cancel
	l.mu.Unlock()
	return held, func() { cancel(errors.New("released")) }, nil
}

// loseLease ends the lease held now with thread.ErrLeaseLost.
func (l *leased) loseLease() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lose(thread.ErrLeaseLost)
}

// A runtime that loses the thread's lease while a tool runs stops: the
// Resume ends with thread.ErrLeaseLost. If nothing was appended since the
// act began, its record still lands; if another process appended
// meanwhile (it may have found the act in doubt), the record is dropped
// and the act is left to the new holder — the log never says both.
func TestALostLease(t *testing.T) {
	for _, tc := range []struct {
		name         string
		otherAppends bool
	}{
		{"nothing appended meanwhile: the record lands", false},
		{"another process appended meanwhile: the record is dropped", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			pebble, err := thread.OpenPebble(t.TempDir())
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, pebble.Close()) })
			store := &leased{PebbleStore: pebble}

			running, finish := make(chan struct{}), make(chan struct{})
			tools, err := harness.NewToolbox(harness.Tool{
				Spec:  facts.ToolSchema{Name: "read_file", Description: "Read a file."},
				Needs: action.Read,
				Run: func(ctx context.Context, _ json.RawMessage) (facts.Report, error) {
					close(running)
					<-finish
					return facts.Report{Status: facts.StatusSucceeded, Stdout: "ttl_seconds = 60"}, nil
				},
			})
			require.NoError(t, err)
			script, err := model.ParseScript("lease", []byte(`{"text": "Reading.", "tool_calls": [{"id": "c", "name": "read_file", "args": "{}"}]}
{"text": "Done."}`))
			require.NoError(t, err)
			cfg, err := harness.NewConfig(harness.WithModelName("scripted"))
			require.NoError(t, err)
			actor, err := harness.CodingActor(cfg, tools)
			require.NoError(t, err)
			rt, err := harness.NewRuntime(store, harness.Services{Model: script, Tools: tools}, cfg)
			require.NoError(t, err)

			done := make(chan error, 1)
			go func() {
				_, err := rt.Start(ctx, actor, "t", "Read the cache settings")
				done <- err
			}()
			<-running
			store.loseLease()
			if tc.otherAppends {
				// The new holder's record, say; any fact will do.
				h, err := store.Head(ctx, "t")
				require.NoError(t, err)
				d, err := facts.NewDraft(facts.KindUserMessage, facts.IngressCause("elsewhere"), facts.UserMessage{Text: "From another machine."})
				require.NoError(t, err)
				_, err = store.Append(ctx, "t", h.Seq, d)
				require.NoError(t, err)
			}
			close(finish)
			err = <-done
			require.ErrorIs(t, err, thread.ErrLeaseLost)

			var kinds []facts.Kind
			for f, err := range store.Read(ctx, "t", 1) {
				require.NoError(t, err)
				kinds = append(kinds, f.Kind)
			}
			require.Contains(t, kinds, facts.KindActionStarted)
			if tc.otherAppends {
				require.NotContains(t, kinds, facts.KindActionCompleted, "the act is the new holder's to reconcile")
			} else {
				require.Contains(t, kinds, facts.KindActionCompleted)
			}
			turns := 0
			for _, k := range kinds {
				if k == facts.KindModelTurn {
					turns++
				}
			}
			require.Equal(t, 1, turns, "no model turn runs after the lease is lost")
		})
	}
}

// A lease lost while the store appends: the append fails with the
// context's error, and Resume says why.
func TestALostLeaseIsNamed(t *testing.T) {
	ctx := context.Background()
	pebble, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, pebble.Close()) })
	store := &leased{PebbleStore: pebble, loseOnAppend: true}
	script, err := model.ParseScript("lease", []byte(`{"text": "Done."}`))
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelName("scripted"))
	require.NoError(t, err)
	tools, err := harness.NewToolbox()
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tools)
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, harness.Services{Model: script, Tools: tools}, cfg)
	require.NoError(t, err)
	_, err = rt.Start(ctx, actor, "t", "Hello")
	require.ErrorIs(t, err, thread.ErrLeaseLost)
	require.ErrorContains(t, err, "thread lease lost")
	h, err := store.Head(ctx, "t")
	require.NoError(t, err)
	require.EqualValues(t, 1, h.Seq, "only the message posted before the lease was taken")
}

// Undo holds the thread's lease while it puts files back, as Resume does.
func TestUndoTakesTheLease(t *testing.T) {
	e := newStockEnv(t, stockScript)
	require.Equal(t, harness.StatusDone, e.runApproved("t").Status)
	store := &leased{PebbleStore: e.store}
	_, err := harness.Undo(ctx, store, e.rt.Services, "t", 0, "ana")
	require.NoError(t, err)
	store.mu.Lock()
	took := store.lose != nil
	store.mu.Unlock()
	require.True(t, took, "undo took the lease")
	require.Equal(t, "ttl_seconds = 60\n", e.read("cache.toml"))
}

// A store wrapped (here by Watch) still has its threads leased: the
// runtime looks through wrappers for the outermost Leaser — which may be
// a wrapper itself, as leased is.
func TestResumeLeasesThroughAWrapper(t *testing.T) {
	e := newEnv(t, `{"text": "Hello."}`)
	store := &leased{PebbleStore: e.store}
	rt, err := harness.NewRuntime(harness.Watch(store, func(facts.Fact, error) {}), e.rt.Services, e.rt.Config)
	require.NoError(t, err)
	_, err = rt.Start(ctx, e.actor, "t", "Hello")
	require.NoError(t, err)
	store.mu.Lock()
	defer store.mu.Unlock()
	require.NotNil(t, store.lose, "Resume took the lease through the wrapper")
}
