package serve_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
)

// A hosted server serves until it is idle for the bound (a request
// starts the wait anew), until its context ends, or until it stops.
func TestHostedUntil(t *testing.T) {
	f := newFixture(t, `{"text": "Done."}`+"\n")
	f.close() // only the hosted one below serves the store
	h, err := serve.Host(f.place, serve.Options{Store: f.store, Stock: f.stock, Tokens: []stock.ServeToken{{Name: "ana", Token: token}}}, "127.0.0.1:0", false)
	require.NoError(t, err)
	defer h.Stop()

	// A request well inside the bound (a loaded machine may be late with
	// it by most of a second); the wait ends a bound after it, not a
	// bound after the server started.
	const idle = 2 * time.Second
	sent := make(chan time.Time, 1)
	go func() {
		time.Sleep(100 * time.Millisecond)
		sent <- time.Now()
		if resp, err := http.Get("http://" + h.Addr().String() + "/"); err == nil {
			resp.Body.Close()
		}
	}()
	idled, err := h.Until(context.Background(), idle)
	ended := time.Now()
	require.NoError(t, err)
	require.True(t, idled)
	select {
	case at := <-sent:
		require.GreaterOrEqual(t, ended.Sub(at), idle, "the request started the wait anew")
	default:
		t.Fatal("idle before the request was sent")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	idled, err = h.Until(ctx, 0)
	require.NoError(t, err)
	require.False(t, idled)

	h.Stop()
	idled, err = h.Until(context.Background(), 0)
	require.NoError(t, err, "a server stopped is no failure")
	require.False(t, idled)
}
