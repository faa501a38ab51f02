package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// hookSleep is how long each of sleepyHooks' hooks runs: long enough
// that hooks started side by side all start before the first ends, on a
// loaded machine too.
const hookSleep = time.Second

// sleepyHooks runs each hook for hookSleep and answers its name as added
// context. A hook waits, besides, until every hook declared after it has
// ended (at most 30 s), so that they end in the reverse of their declared
// order when they run at once. It keeps when each started and ended.
type sleepyHooks struct {
	mu sync.Mutex // guards the fields below
	// started and ended are the times each hook (by name) started and
	// ended; order is the names in the order they ended.
	started, ended map[string]time.Time
	order          []string
	// after are, for each name, the names it waits to have ended.
	after map[string][]string
}

func (s *sleepyHooks) RunHook(ctx context.Context, h facts.Hook, _ []byte) (action.HookExit, error) {
	s.mu.Lock()
	s.started[h.Name] = time.Now()
	s.mu.Unlock()
	select {
	case <-time.After(hookSleep):
	case <-ctx.Done():
		return action.HookExit{}, ctx.Err()
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.mu.Lock()
		all := true
		for _, n := range s.after[h.Name] {
			_, ok := s.ended[n]
			all = all && ok
		}
		s.mu.Unlock()
		if all {
			break
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended[h.Name] = time.Now()
	s.order = append(s.order, h.Name)
	return action.HookExit{Stdout: fmt.Sprintf(`{"additionalContext": "said by %s"}`, h.Name), Took: hookSleep}, nil
}

// span is how long the hooks took, from the first start to the last end,
// and whether every one started before any ended.
func (s *sleepyHooks) span() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first, last, firstEnd, lastStart time.Time
	for n, t := range s.started {
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(lastStart) {
			lastStart = t
		}
		e := s.ended[n]
		if e.After(last) {
			last = e
		}
		if firstEnd.IsZero() || e.Before(firstEnd) {
			firstEnd = e
		}
	}
	return last.Sub(first), lastStart.Before(firstEnd)
}

// watchedModel is a model that keeps the requests it was given.
type watchedModel struct {
	model.Model
	mu   sync.Mutex // guards reqs
	reqs []model.Request
}

func (w *watchedModel) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	w.mu.Lock()
	w.reqs = append(w.reqs, req)
	w.mu.Unlock()
	return w.Model.Turn(ctx, req)
}

// toolText is the text of the last tool message the model was shown.
func (w *watchedModel) toolText() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	text := ""
	for _, r := range w.reqs {
		for _, m := range r.Messages {
			if m.Role == facts.RoleTool {
				text = m.Text
			}
		}
	}
	return text
}

// afterRuntime is a runtime on store whose threads record three after_tool
// hooks (one, two, three), run by hooks, with a model that reads a file
// and then says done.
func afterRuntime(t *testing.T, store thread.Store, hooks harness.HookRunner, opts ...harness.Option) (*harness.Runtime, harness.Actor, *watchedModel) {
	t.Helper()
	script, err := model.ParseScript("hooks", []byte(`{"text": "reading", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a\"}"}]}
{"text": "done"}
`))
	require.NoError(t, err)
	m := &watchedModel{Model: script}
	tb, err := harness.NewToolbox(harness.Tool{Spec: facts.ToolSchema{Name: "read_file"}, Needs: action.Read,
		Run: func(context.Context, json.RawMessage) (facts.Report, error) {
			return facts.Report{Status: facts.StatusSucceeded, Stdout: "contents"}, nil
		}})
	require.NoError(t, err)
	cfg, err := harness.NewConfig(append([]harness.Option{harness.WithModelBackoff(0), func(c *harness.Config) {
		c.Hooks = []facts.Hook{
			{Name: "one", Event: facts.HookAfterTool, Scope: "project", Digest: "d1"},
			{Name: "two", Event: facts.HookAfterTool, Scope: "project", Digest: "d2"},
			{Name: "skip", Event: facts.HookAfterTool, Matcher: "write_file", Scope: "project", Digest: "d3"},
			{Name: "three", Event: facts.HookAfterTool, Scope: "user", Digest: "d4"}}
	}}, opts...)...)
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tb)
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, harness.Services{Model: m, Tools: tb, Hooks: hooks}, cfg)
	require.NoError(t, err)
	return rt, actor, m
}

// afterRuns are the causes and hook names of a thread's hook.ran facts, in
// log order.
func afterRuns(t *testing.T, store thread.Store, id string) (causes, names []string) {
	for f, err := range store.Read(context.Background(), id, 0) {
		require.NoError(t, err)
		if f.Kind == facts.KindHookRan {
			p, err := facts.Decode[facts.HookRan](f)
			require.NoError(t, err)
			causes = append(causes, f.Cause)
			names = append(names, p.Name)
		}
	}
	return causes, names
}

// The after_tool hooks of a call run at once: three hooks of hookSleep
// each take well under the 3 s they take one after another, they end in the
// reverse of their declared order, and yet their records (under one key)
// and the notes the model reads are in declared order. A hook whose
// matcher does not take the tool does not run. The log verifies; a log
// written by the rule before (one at a time) still runs and verifies.
func TestAfterHooksRunTogether(t *testing.T) {
	ctx := context.Background()
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })

	hooks := &sleepyHooks{started: map[string]time.Time{}, ended: map[string]time.Time{},
		after: map[string][]string{"one": {"two", "three"}, "two": {"three"}}}
	rt, actor, m := afterRuntime(t, store, hooks)
	out, err := rt.Start(ctx, actor, "together", "Read it")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)
	took, overlapped := hooks.span()
	t.Logf("three %v after_tool hooks took %s side by side", hookSleep, took)
	// Side by side, told by order, not by time: one after another, the
	// first would end before the second started.
	require.True(t, overlapped, "every hook started before any ended")
	require.Equal(t, []string{"three", "two", "one"}, hooks.order, "they ended in reverse")
	causes, names := afterRuns(t, store, "together")
	require.Equal(t, []string{"hook/after_tool/1-r/0+2", "hook/after_tool/1-r/0+2", "hook/after_tool/1-r/0+2"}, causes)
	require.Equal(t, []string{"one", "two", "three"}, names, "recorded in declared order")
	text := m.toolText()
	one, two, three := strings.Index(text, "said by one"), strings.Index(text, "said by two"), strings.Index(text, "said by three")
	require.True(t, one >= 0 && one < two && two < three, "the model reads the notes in declared order: %q", text)
	require.NoError(t, audit.VerifyLog(ctx, store, actor, "together"))

	hooks = &sleepyHooks{started: map[string]time.Time{}, ended: map[string]time.Time{}}
	rt, actor, _ = afterRuntime(t, store, hooks, harness.AfterHooksOneAtATime())
	out, err = rt.Start(ctx, actor, "one-at-a-time", "Read it")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)
	_, overlapped = hooks.span()
	require.False(t, overlapped)
	causes, names = afterRuns(t, store, "one-at-a-time")
	require.Equal(t, []string{"hook/after_tool/1-r/0", "hook/after_tool/1-r/1", "hook/after_tool/1-r/3"}, causes)
	require.Equal(t, []string{"one", "two", "three"}, names)
	require.NoError(t, audit.VerifyLog(ctx, store, actor, "one-at-a-time"))
	require.NoError(t, audit.VerifyLog(ctx, store, actor, "together"))
}

// A run of a call's after_tool hooks cut short (the process stopped while
// they ran) records none of them; on resume they all run again, recorded
// once, in declared order.
func TestAfterHooksCutShort(t *testing.T) {
	ctx := context.Background()
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })

	held := &countingHooks{hold: make(chan struct{})}
	rt, actor, _ := afterRuntime(t, store, held)
	stop, cancel := context.WithCancel(ctx)
	go func() {
		for deadline := time.Now().Add(30 * time.Second); held.runs.Load() < 3 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err = rt.Start(stop, actor, "t", "Read it")
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, int64(3), held.runs.Load(), "the three hooks ran at once")
	causes, _ := afterRuns(t, store, "t")
	require.Empty(t, causes)

	free := &countingHooks{answer: `{}`}
	rt, actor, _ = afterRuntime(t, store, free)
	out, err := rt.Resume(ctx, actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)
	require.Equal(t, int64(3), free.runs.Load())
	_, names := afterRuns(t, store, "t")
	require.Equal(t, []string{"one", "two", "three"}, names)
	require.NoError(t, audit.VerifyLog(ctx, store, actor, "t"))
}
