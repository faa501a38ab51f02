package stock_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tools"
)

// The stock harness of a workspace, as the harness command builds it: the
// store found (here, made) at the workspace root, the built-in tools
// confined to it, an observer that keeps file contents for undo. The
// thread parks on the write; Inspect says what it waits for, Preview shows
// the change, and an approval policy answers it.
func ExampleNewStock() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "harness-stock")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644)

	place, _ := stock.Locate(root, "")
	store, err := place.OpenStore(ctx, 0, true)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	script, _ := model.ParseScript("example", []byte(`
{"text": "Setting the TTL.", "tool_calls": [{"id": "call_1", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"text": "Done."}`))
	cfg, _ := harness.NewConfig(harness.WithModelName("scripted:example"))
	sh, _ := stock.NewStock(place, cfg)
	svc, _ := sh.Services(script, stock.BlobsOf(store))
	rt, _ := harness.NewRuntime(store, svc, cfg)

	th := rt.Thread(sh.Actor, "t1")
	th.Start(ctx, "Set the cache TTL to 300")
	st, _ := drive.Inspect(ctx, th)
	fmt.Println(st.Status)
	for _, w := range st.Waits {
		fmt.Println(w.Kind, w.RequestID, w.Tool)
		fmt.Print(tools.Preview(root, w.Tool, w.Args))
	}

	writes, _ := drive.NewApproval("writes", nil, nil)
	drive.ApplyApproval(ctx, th, writes, st.Waits)
	out, _ := th.Resume(ctx)
	b, _ := os.ReadFile(filepath.Join(root, "cache.toml"))
	fmt.Print(out.Status, ": ", string(b))
	// Output:
	// parked
	// confirmation 1-call_1 write_file
	// --- a/cache.toml
	// +++ b/cache.toml
	// @@ -1 +1 @@
	// -ttl_seconds = 60
	// +ttl_seconds = 300
	// done: ttl_seconds = 300
}

// A front end opens its workspace once, with the command line's settings
// over the files', and builds every runtime from the session.
func ExampleOpenSession() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "harness-session")
	defer os.RemoveAll(root)
	config, _ := os.MkdirTemp("", "harness-config") // the user's settings: none
	defer os.RemoveAll(config)

	place, _ := stock.Locate(root, "")
	turns := 5
	s, err := stock.OpenSession(ctx, place, stock.SessionOptions{
		Getenv: func(k string) string {
			if k == "XDG_CONFIG_HOME" {
				return config
			}
			return ""
		},
		Flags:  stock.FlagSource(stock.Settings{Approve: "writes", MaxTurns: &turns}, "approve", "max_turns"),
		Drive:  true,
		Create: true,
	})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	script, _ := model.ParseScript("done", []byte(`{"text": "Nothing to do."}`))
	rt, free, err := s.Runtime(stock.WithModel(script))
	if err != nil {
		panic(err)
	}
	defer free()
	out, err := rt.Start(ctx, s.Stock.Actor, "t1", "Check the cache TTL")
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Status, s.Approval.Mode, s.Config().MaxTurns)
	// Output: done writes 5
}
