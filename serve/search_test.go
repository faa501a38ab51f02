package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/search"
)

// GET /api/search answers the one search document, the command's -o json.
func TestAPISearch(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	require.Equal(t, harness.StatusParked, f.start("t1").Status)
	require.Equal(t, harness.StatusParked, f.start("t2").Status)

	get := func(query string, more string) (int, drive.SearchResult, string) {
		resp, b := f.do("GET", "/api/search?q="+url.QueryEscape(query)+more, "")
		var res drive.SearchResult
		if resp.StatusCode == http.StatusOK {
			require.NoError(t, json.Unmarshal(b, &res))
		}
		return resp.StatusCode, res, string(b)
	}
	code, res, body := get("kind:confirmation.requested status:parked path:cache.toml", "")
	require.Equal(t, http.StatusOK, code, body)
	require.Len(t, res.Hits, 2)
	require.Equal(t, "t2", res.Hits[0].Thread, "newest first")
	require.Equal(t, "kind:confirmation.requested status:parked path:cache.toml", res.Query)

	code, res, body = get("kind:confirmation.requested", "&limit=1")
	require.Equal(t, http.StatusOK, code, body)
	require.Len(t, res.Hits, 1)
	require.NotEmpty(t, res.Next)
	code, res, body = get("kind:confirmation.requested", "&limit=1&page="+res.Next)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "t1", res.Hits[0].Thread)
	require.Empty(t, res.Next)

	code, _, body = get("colour:red", "")
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, body, `term 1 \"colour:red\": no field`)
	require.Contains(t, body, "bad_query")
	code, _, _ = get("ttl", "&limit=0")
	require.Equal(t, http.StatusBadRequest, code)
	code, _, _ = get("ttl", "&page=zz")
	require.Equal(t, http.StatusBadRequest, code)
}

// The server indexes what is appended through it, without waiting for a
// search: the index, read as it is (no update), soon has the thread.
func TestServerIndexesAppends(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	require.Equal(t, harness.StatusParked, f.start("t1").Status)
	q, err := search.Parse("kind:confirmation.requested thread:t1", time.Now())
	require.NoError(t, err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ix, err := f.place.OpenSearch(context.Background(), 10*time.Second)
		require.NoError(t, err)
		p, err := ix.Search(context.Background(), f.store, q, search.Options{})
		require.NoError(t, ix.Close())
		require.NoError(t, err)
		if len(p.Hits) == 1 {
			return
		}
		require.True(t, time.Now().Before(deadline), "the server never indexed t1")
		time.Sleep(20 * time.Millisecond)
	}
}

// The page's search box: hits linked to their facts, a query that does
// not parse said on the page.
func TestPageSearch(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	require.Equal(t, harness.StatusParked, f.start("t1").Status)
	resp, b := f.do("GET", "/", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(b), `action="search"`)

	resp, b = f.do("GET", "/search?q="+url.QueryEscape("kind:confirmation.requested <script>"), "")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Contains(t, string(b), "no facts found")
	require.NotContains(t, string(b), "<script>")

	resp, b = f.do("GET", "/search?q="+url.QueryEscape("kind:confirmation.requested path:cache.toml"), "")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Contains(t, string(b), `href="t/t1#f`)

	resp, b = f.do("GET", "/search?q="+url.QueryEscape("colour:red"), "")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Contains(t, string(b), "no field &#34;colour&#34;")
}
