package stock_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/stock"
)

// wordCount is a custom tool: it counts the words of a workspace file.
func wordCount(root string) harness.Tool {
	return harness.Tool{
		Spec: facts.ToolSchema{Name: "word_count", Description: "Count the words of a file in the workspace.",
			Schema: facts.RawJSON(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		Needs: action.Read,
		Run: func(_ context.Context, args json.RawMessage) (facts.Report, error) {
			var a struct{ Path string }
			if err := json.Unmarshal(args, &a); err != nil {
				return facts.Report{}, err
			}
			if !filepath.IsLocal(a.Path) {
				return facts.Report{}, fmt.Errorf("path %q is not inside the workspace", a.Path)
			}
			b, err := os.ReadFile(filepath.Join(root, a.Path))
			if err != nil {
				return facts.Report{}, err
			}
			return facts.Report{Status: facts.StatusSucceeded, Stdout: fmt.Sprint(len(strings.Fields(string(b))))}, nil
		},
	}
}

// A custom tool added to the stock harness, which keeps its built-in
// tools, its sandbox and its observer: the model calls it like any other,
// through the effect boundary.
func ExampleWithTools() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "harness-stock")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "notes.md"), []byte("three short words\n"), 0o644)

	place, _ := stock.Locate(root, "")
	store, err := place.OpenStore(ctx, 0, true)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	script, _ := model.ParseScript("example", []byte(`
{"tool_calls": [{"id": "w", "name": "word_count", "args": "{\"path\":\"notes.md\"}"}]}
{"text": "notes.md has 3 words."}`))
	cfg, _ := harness.NewConfig(harness.WithModelName("scripted:example"))
	sh, err := stock.NewStock(place, cfg, stock.WithTools(wordCount(root)))
	if err != nil {
		panic(err)
	}
	svc, _ := sh.Services(script, stock.BlobsOf(store))
	rt, _ := harness.NewRuntime(store, svc, cfg)

	out, _ := rt.Start(ctx, sh.Actor, "t1", "How many words are in notes.md?")
	_, builtin := sh.Toolbox.Lookup("write_file")
	fmt.Println(out.Status, "· write_file still there:", builtin)
	for f := range store.Read(ctx, "t1", 1) {
		if f.Kind == facts.KindActionCompleted {
			c, _ := facts.Decode[facts.ActionCompleted](f)
			fmt.Println(c.ActionID, c.Report.Status, c.Report.Stdout, "· observed:", c.Observation.Available)
		}
	}
	// Output:
	// done · write_file still there: true
	// 1-w succeeded 3 · observed: true
}

// WithTools keeps the stock defaults (the sandbox that hides the store)
// and refuses a tool whose name a built-in one takes.
func TestWithTools(t *testing.T) {
	root := t.TempDir()
	place, err := stock.Locate(root, "")
	require.NoError(t, err)
	cfg, err := harness.NewConfig()
	require.NoError(t, err)
	plain, err := stock.NewStock(place, cfg)
	require.NoError(t, err)
	sh, err := stock.NewStock(place, cfg, stock.WithTools(wordCount(root)), stock.WithTools(inline("second")))
	require.NoError(t, err)
	names := func(s *stock.Stock) []string {
		var out []string
		for _, sc := range s.Toolbox.Schemas() {
			out = append(out, sc.Name)
		}
		return out
	}
	require.Equal(t, append(names(plain), "word_count", "second"), names(sh), "after the built-in ones, in order")
	require.Equal(t, plain.Sandbox.Hidden, sh.Sandbox.Hidden, "the sandbox still hides what stock hides")
	require.Equal(t, sandbox.WorkspaceWrite, sh.Sandbox.Mode)

	_, err = stock.NewStock(place, cfg, stock.WithTools(inline("write_file")))
	require.ErrorContains(t, err, `two tools named "write_file"`)
}

func inline(name string) harness.Tool {
	return harness.Tool{Spec: facts.ToolSchema{Name: name}, Needs: action.Read,
		Run: func(context.Context, json.RawMessage) (facts.Report, error) {
			return facts.Report{Status: facts.StatusSucceeded}, nil
		}}
}
