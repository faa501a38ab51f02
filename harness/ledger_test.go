package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// Two threads share a workspace, each driven by its own runtime (as a
// worker drives several), with one Ledger: their writes overlap in time,
// and each thread's action.completed names the other's file as the
// other thread's action, and nothing as unrecorded.
func TestThreadsSharingAWorkspaceNameEachOther(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	ledger := &action.Ledger{}

	// b's write begins first and waits for a's to write; a's waits until
	// b's has written; b's holds until a's action has been observed.
	bRunning, aWrote, bWrote, aObserved := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	write := func(first, wait1, signal, wait2 chan struct{}) func(context.Context, json.RawMessage) (facts.Report, error) {
		return func(_ context.Context, args json.RawMessage) (facts.Report, error) {
			var a struct{ Path string }
			if err := json.Unmarshal(args, &a); err != nil {
				return facts.Report{}, err
			}
			if first != nil {
				close(first)
			}
			<-wait1
			if err := os.WriteFile(filepath.Join(root, a.Path), []byte(a.Path), 0o644); err != nil {
				return facts.Report{}, err
			}
			close(signal)
			<-wait2
			return facts.Report{Status: facts.StatusSucceeded}, nil
		}
	}
	runtime := func(script string, run func(context.Context, json.RawMessage) (facts.Report, error)) (*harness.Runtime, harness.Actor) {
		tools, err := harness.NewToolbox(harness.Tool{Spec: facts.ToolSchema{Name: "write_file"}, Needs: action.Write, Ask: action.AskNever, Run: run})
		require.NoError(t, err)
		cfg, err := harness.NewConfig(harness.WithModelBackoff(0))
		require.NoError(t, err)
		actor, err := harness.CodingActor(cfg, tools)
		require.NoError(t, err)
		m, err := model.ParseScript("ledger", []byte(script))
		require.NoError(t, err)
		ws, err := action.NewWorkspace(root)
		require.NoError(t, err)
		t.Cleanup(func() { ws.Close() })
		rt, err := harness.NewRuntime(store, harness.Services{Model: m, Tools: tools, Observer: ws, Workspace: root, Ledger: ledger}, cfg)
		require.NoError(t, err)
		return rt, actor
	}
	script := func(path string) string {
		return `{"text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"` + path + `\"}"}]}
{"text": "Done."}`
	}
	rtA, actA := runtime(script("a.txt"), write(nil, bRunning, aWrote, bWrote))
	rtB, actB := runtime(script("b.txt"), write(bRunning, aWrote, bWrote, aObserved))

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, err := rtA.Start(ctx, actA, "ta", "write a")
		require.NoError(t, err)
	}()
	go func() {
		defer wg.Done()
		_, err := rtB.Start(ctx, actB, "tb", "write b")
		require.NoError(t, err)
	}()
	// a's action is observed once its thread records its completion.
	go func() {
		for {
			time.Sleep(time.Millisecond)
			for f, err := range store.Read(ctx, "ta", 1) {
				if err == nil && f.Kind == facts.KindActionCompleted {
					close(aObserved)
					return
				}
			}
		}
	}()
	wg.Wait()

	completed := func(id string) facts.Observation {
		for f, err := range store.Read(ctx, id, 1) {
			require.NoError(t, err)
			if f.Kind == facts.KindActionCompleted {
				p, err := facts.Decode[facts.ActionCompleted](f)
				require.NoError(t, err)
				return p.Observation
			}
		}
		t.Fatalf("thread %s completed no action", id)
		return facts.Observation{}
	}
	oa, ob := completed("ta"), completed("tb")
	require.Len(t, oa.Changed, 2, "a sees both files change")
	require.Len(t, oa.Others, 1)
	require.Equal(t, "tb", oa.Others[0].Thread)
	require.Equal(t, []string{"b.txt"}, oa.Others[0].Paths)
	require.True(t, oa.Others[0].Running)
	require.Empty(t, oa.Unrecorded)
	require.Len(t, ob.Changed, 2, "b sees both files change")
	require.Len(t, ob.Others, 1)
	require.Equal(t, "ta", ob.Others[0].Thread)
	require.Equal(t, []string{"a.txt"}, ob.Others[0].Paths)
	require.False(t, ob.Others[0].Running)
	require.Empty(t, ob.Unrecorded)
}
