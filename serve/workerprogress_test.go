package serve_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
	"github.com/seed-7cc7a084/harness/worker"
)

// TestWorkersLiveOutput: a server of a NATS store shows, on the API's
// progress stream and the page's, the output of a command that a worker
// — another connection to NATS, as another process — runs for a thread
// of the store, while the command runs (before its completion is
// recorded): raw on the API, escaped on the page. Nothing of it is
// recorded but the command's own output, as always.
func TestWorkersLiveOutput(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	require.NoError(t, err)
	ns.Start()
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	require.True(t, ns.ReadyForConnections(10*time.Second))
	ctx := context.Background()

	f := newFixture(t, slowScript(t))
	p := f.place
	p.Remote = ns.ClientURL()
	shared, err := p.OpenStore(ctx, 0, false)
	require.NoError(t, err)
	t.Cleanup(func() { shared.Close() })
	srv, err := serve.New(serve.Options{Store: shared, Stock: f.stock, Tokens: []stock.ServeToken{{Name: "ana", Token: token}}, WriteTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	g := *f
	g.http, g.srv, g.store = ts, srv, shared

	// The worker's own connection, as another process's.
	ws, err := natsstore.Dial(ctx, ns.ClientURL())
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	m, err := model.ParseScript("s", []byte(slowScript(t)))
	require.NoError(t, err)
	rt, err := harness.NewRuntime(ws, harness.Services{}, f.stock.Config)
	require.NoError(t, err)
	_, err = rt.Thread(f.stock.Actor, "t1").Submit(ctx, "Run it")
	require.NoError(t, err)

	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, r := g.stream(sctx, "/api/threads/t1/progress")
	defer resp.Body.Close()
	api := readProgress(t, r)
	presp, pr := g.stream(sctx, "/t/t1/progress")
	defer presp.Body.Close()
	page := readProgress(t, pr)

	work, err := ws.Work(ctx)
	require.NoError(t, err)
	approval, err := drive.NewApproval("all", nil, nil)
	require.NoError(t, err)
	w, err := worker.New(worker.Options{
		Store: ws, Queue: worker.FromWork(work), Actor: f.stock.Actor,
		Runtime: func(string) (*harness.Runtime, func(), error) {
			svc, err := f.stock.Services(m, stock.BlobsOf(ws))
			if err != nil {
				return nil, nil, err
			}
			rt, err := harness.NewRuntime(ws, svc, f.stock.Config)
			return rt, func() {}, err
		},
		LoadModel: func(string) (model.Model, error) { return m, nil },
		Approval:  approval,
		Progress:  stock.PublishProgress(ws),
		Poll:      200 * time.Millisecond,
	})
	require.NoError(t, err)
	wctx, stopWorker := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { stopWorker(); <-done }()

	out, completed := outputUntil(t, &g, api, "line1\n")
	require.False(t, completed, "line1 came only after the action completed: %q", out)
	out, _ = outputUntil(t, &g, api, "cleared")
	require.Contains(t, out, "line2\nline3\n<script>alert(1)</script>\n\x1b[2Jcleared", "the API gives the text raw")
	pout, _ := outputUntil(t, &g, page, "cleared")
	require.NotContains(t, pout, "\x1b", "the page's text has no terminal escape")
	require.Contains(t, pout, `<script>alert(1)</script>`+"\n"+`\x1b[2Jcleared`, "escaped as the terminal shows it")

	g.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone })
	c, err := facts.Decode[facts.ActionCompleted](g.last("t1", facts.KindActionCompleted))
	require.NoError(t, err)
	require.Contains(t, c.Report.Stdout, "line1\nline2\nline3\n", "the record keeps the whole output")
}
