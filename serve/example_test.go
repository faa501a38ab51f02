package serve_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
)

// A server of a workspace's store: its page and API behind a token that
// names who acts.
func Example() {
	root, _ := os.MkdirTemp("", "harness-example-")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644)
	place, _ := stock.Locate(root, "")
	store, err := place.HoldStore(context.Background(), 0, true)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	cfg, _ := harness.NewConfig()
	st, err := stock.NewStock(place, cfg)
	if err != nil {
		panic(err)
	}

	token := serve.NewToken()
	srv, err := serve.New(serve.Options{Store: store, Stock: st, Tokens: []stock.ServeToken{{Name: "ana", Token: token}}})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	get := func(auth string) {
		req, _ := http.NewRequest("GET", ts.URL+"/api/threads", nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, len(b) > 0)
	}
	get("")    // no token: refused
	get(token) // the list
	// Output:
	// 401 true
	// 200 true
}
