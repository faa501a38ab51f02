package harness_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

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
			store := &harnesstest.Leased{PebbleStore: pebble}

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
			store.LoseLease()
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
	store := &harnesstest.Leased{PebbleStore: pebble, LoseOnAppend: true}
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

// A store wrapped (here by Watch) still has its threads leased: the
// runtime looks through wrappers for the outermost Leaser — which may be
// a wrapper itself, as leased is.
func TestResumeLeasesThroughAWrapper(t *testing.T) {
	e := harnesstest.New(t, `{"text": "Hello."}`)
	store := &harnesstest.Leased{PebbleStore: e.Store}
	rt, err := harness.NewRuntime(thread.Watch(store, func(facts.Fact, error) {}), e.RT.Services, e.RT.Config)
	require.NoError(t, err)
	_, err = rt.Start(ctx, e.Actor, "t", "Hello")
	require.NoError(t, err)
	require.True(t, store.Took(), "Resume took the lease through the wrapper")
}

// A holder that keeps a thread across calls (a worker, from one look to
// the next) calls Resume under the context it holds the thread with: the
// Resume's own Hold sees the thread held by that context and waits for no
// one, Free says the thread is free of anyone but the holder, and to
// everyone else the thread stays held until the holder lets go.
func TestHoldUnderItsOwnContext(t *testing.T) {
	e := harnesstest.New(t, `{"text": "Hello."}`)
	held, release, err := harness.Hold(ctx, e.Store, "t")
	require.NoError(t, err)

	bounded, cancel := context.WithTimeout(held, 30*time.Second) // a wait for the holder would run it out
	defer cancel()
	again, releaseAgain, err := harness.Hold(bounded, e.Store, "t")
	require.NoError(t, err, "a Hold under the holder's context does not wait for the holder")
	releaseAgain() // lets go of nothing
	require.NoError(t, again.Err())

	free, err := harness.Free(held, e.Store, "t")
	require.NoError(t, err)
	require.True(t, free, "the holder asks: nobody else holds it")
	free, err = harness.Free(ctx, e.Store, "t")
	require.NoError(t, err)
	require.False(t, free, "anyone else: the thread is held")

	out, err := e.RT.Start(bounded, e.Actor, "t", "Hello")
	require.NoError(t, err, "Resume under the holder's context")
	require.Equal(t, harness.StatusDone, out.Status)

	other, cancelOther := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelOther()
	_, _, err = harness.Hold(other, e.Store, "t")
	require.ErrorIs(t, err, context.DeadlineExceeded, "still held for everyone else")
	_, releaseU, err := harness.Hold(held, e.Store, "u")
	require.NoError(t, err, "another thread is not held by the context")
	releaseU()

	release()
	free, err = harness.Free(ctx, e.Store, "t")
	require.NoError(t, err)
	require.True(t, free)
}
