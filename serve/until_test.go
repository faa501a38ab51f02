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

	start := time.Now()
	go func() {
		time.Sleep(150 * time.Millisecond)
		if resp, err := http.Get("http://" + h.Addr().String() + "/"); err == nil {
			resp.Body.Close()
		}
	}()
	idled, err := h.Until(context.Background(), 300*time.Millisecond)
	require.NoError(t, err)
	require.True(t, idled)
	require.Greater(t, time.Since(start), 450*time.Millisecond, "the request at 150ms started the wait anew")

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
