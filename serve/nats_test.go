package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// TestOnNATS: a server of a NATS store shows every thread of it, with the
// workspace each works in, and its streams see what other processes
// append to the store directly.
func TestOnNATS(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	require.NoError(t, err)
	ns.Start()
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	require.True(t, ns.ReadyForConnections(10*time.Second))
	ctx := context.Background()

	// Two machines' threads: one of the server's workspace, one elsewhere.
	f := newFixture(t, harnesstest.ToolScript) // for its workspace and stock harness
	p := f.place
	p.Remote = ns.ClientURL()
	shared, err := p.OpenStore(ctx, 0, false)
	require.NoError(t, err)
	t.Cleanup(func() { shared.Close() })
	other, err := natsstore.Dial(ctx, ns.ClientURL())
	require.NoError(t, err)
	t.Cleanup(func() { other.Close() })
	start := func(id, workspace string) {
		cfg, err := harness.NewConfig(harness.WithModelName(f.script), harness.WithWorkspace(workspace))
		require.NoError(t, err)
		st, err := stock.NewStock(f.place, cfg)
		require.NoError(t, err)
		m, err := model.ParseScript("s", []byte(harnesstest.ToolScript))
		require.NoError(t, err)
		rt, err := harness.NewRuntime(other, harness.Services{Model: m, Tools: st.Toolbox}, cfg)
		require.NoError(t, err)
		_, err = rt.Start(ctx, st.Actor, id, "go")
		require.NoError(t, err)
	}
	start("mine", f.stock.Config.Workspace)
	start("theirs", "laptop:/home/bob/app")

	srv, err := serve.New(serve.Options{Store: shared, Stock: f.stock, Tokens: []stock.ServeToken{{Name: "ana", Token: token}}, Poll: 50 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	g := *f
	g.http, g.srv = ts, srv

	resp, b := g.do("GET", "/api/threads", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	var list struct{ Threads []serve.ThreadSummary }
	require.NoError(t, json.Unmarshal(b, &list))
	require.Len(t, list.Threads, 2)
	byID := map[string]serve.ThreadSummary{}
	for _, th := range list.Threads {
		byID[th.Thread] = th
	}
	require.Equal(t, "laptop:/home/bob/app", byID["theirs"].Workspace)
	require.False(t, byID["theirs"].Here)
	require.True(t, byID["mine"].Here)
	require.Equal(t, harness.StatusParked, byID["theirs"].Status)

	// A stream sees what another process appends to NATS itself.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sresp, r := g.stream(sctx, "/api/threads/theirs/stream")
	defer sresp.Body.Close()
	require.Len(t, readEvents(t, r, 5), 5)
	d, err := facts.NewDraft(facts.KindUserMessage, "ingress/more", facts.UserMessage{Text: "also the docs"})
	require.NoError(t, err)
	_, err = other.Append(ctx, "theirs", 5, d)
	require.NoError(t, err)
	evs := readEvents(t, r, 1)
	require.Equal(t, "6", evs[0].id)
}
