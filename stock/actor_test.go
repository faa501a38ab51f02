package stock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
)

// turns is a fold component of one's own: the model turns taken.
type turns struct{ n int }

func (c *turns) Name() string { return "turns" }
func (c *turns) Step(f facts.Fact) error {
	if f.Kind == facts.KindModelTurn {
		c.n++
	}
	return nil
}
func (c *turns) Output() fold.Output[harness.Services] {
	return fold.Output[harness.Services]{View: c.n}
}

// The stock harness with an actor composed one's own way: the stock's
// tools, sandbox and observer, and a fold component whose view is read
// from the thread's fold.
func ExampleWithActor() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "harness-stock")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "notes.md"), []byte("a note\n"), 0o644)

	place, _ := stock.Locate(root, "")
	store, err := place.OpenStore(ctx, 0, true)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	script, _ := model.ParseScript("example", []byte(`
{"tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"notes.md\"}"}]}
{"text": "It says: a note."}`))
	sh, err := stock.NewStock(place, harness.Config{ModelName: "scripted:example"},
		stock.WithActor(func(cfg harness.Config, tools *harness.Toolbox) (harness.Actor, error) {
			return harness.Compose(cfg, harness.System(), harness.Tools(tools), harness.Budget(), harness.Compact(),
				harness.Infer(harness.Scheduler()), harness.Component(func() fold.Component[harness.Services] { return &turns{} }))
		}))
	if err != nil {
		panic(err)
	}
	defer sh.Close()
	svc, _ := sh.Services(script, stock.BlobsOf(store))
	rt, _ := harness.NewRuntime(store, svc, sh.Config)

	th := rt.Thread(sh.Actor, "t1")
	out, err := th.Start(ctx, "What does notes.md say?")
	fmt.Println(out.Status, err)
	n, err := harness.ViewAs[int](ctx, th, "turns")
	fmt.Println(n, err)
	// Output:
	// done <nil>
	// 2 <nil>
}

// An actor WithActor cannot compose is NewStock's error.
func TestWithActorError(t *testing.T) {
	place, err := stock.Locate(t.TempDir(), "")
	require.NoError(t, err)
	bad := errors.New("no actor")
	_, err = stock.NewStock(place, harness.Config{}, stock.WithActor(func(harness.Config, *harness.Toolbox) (harness.Actor, error) {
		return harness.Actor{}, bad
	}))
	require.ErrorIs(t, err, bad)
}

// A session's stock takes the program's own options after its settings':
// its tool and its actor drive the session's threads.
func TestSessionStockOptions(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes.md"), []byte("two words\n"), 0o644))
	place, err := stock.Locate(root, "")
	require.NoError(t, err)
	s, err := stock.OpenSession(ctx, place, stock.SessionOptions{Getenv: sessionEnv(t, ""), Drive: true, Create: true,
		Stock: []stock.Option{stock.WithTools(wordCount(root)),
			stock.WithActor(func(cfg harness.Config, tools *harness.Toolbox) (harness.Actor, error) {
				return harness.Compose(cfg, harness.System(), harness.Tools(tools), harness.Infer(harness.Scheduler()),
					harness.Component(func() fold.Component[harness.Services] { return &turns{} }))
			})}})
	require.NoError(t, err)
	defer s.Close()
	_, ok := s.Stock.Toolbox.Lookup("word_count")
	require.True(t, ok)
	script, err := model.ParseScript("m", []byte(`{"tool_calls": [{"id": "w", "name": "word_count", "args": "{\"path\":\"notes.md\"}"}]}
{"text": "Two."}`))
	require.NoError(t, err)
	rt, free, err := s.Runtime(stock.WithModel(script))
	require.NoError(t, err)
	defer free()
	th := rt.Thread(s.Stock.Actor, "t1")
	out, err := th.Start(ctx, "Count the words of notes.md")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	n, err := harness.ViewAs[int](ctx, th, "turns")
	require.NoError(t, err)
	require.Equal(t, 2, n)
}
