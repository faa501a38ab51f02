package serve_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// TestStop: POST /api/threads/ID/stop stops a parked thread as the
// token's person, with the reason given, and answers its state; a second
// stop appends nothing; an unknown thread is 404; a body that is not the
// stop's is refused. (A command running in another process is cut off:
// cmd/harness's TestStopThroughTheAPI.)
func TestStop(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1")
	resp, b := f.do("POST", "/api/threads/t1/stop", `{"reason": "not <now>"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	var st drive.State
	require.NoError(t, json.Unmarshal(b, &st))
	require.Equal(t, harness.StatusStopped, st.Status)
	require.Equal(t, "stopped by ana: not <now>", st.Reason)
	ts, err := facts.Decode[facts.ThreadStopped](f.last("t1", facts.KindThreadStopped))
	require.NoError(t, err)
	require.Equal(t, facts.ThreadStopped{By: "ana", Reason: "not <now>"}, ts, "the token's name")
	n := len(f.kinds("t1"))

	resp, b = f.do("POST", "/api/threads/t1/stop", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Len(t, f.kinds("t1"), n, "a thread is stopped once")

	resp, b = f.do("POST", "/api/threads/nope/stop", "")
	require.Equal(t, http.StatusNotFound, resp.StatusCode, string(b))
	resp, b = f.do("POST", "/api/threads/t1/stop", `{"by": "mallory"}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(b))
}

// TestPageStop: the page of a parked thread has a Stop button; its form
// stops the thread and redirects to the page, which no longer offers it.
func TestPageStop(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1")
	c, get := f.browser(t)
	get("/?token=" + token)
	page := get("/t/t1")
	require.Contains(t, page, `action="t/t1/stop"`)
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	require.NotNil(t, m)
	resp, err := c.PostForm(f.http.URL+"/t/t1/stop", url.Values{"csrf": {m[1]}})
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Contains(t, string(b), "stopped by ana")
	require.NotContains(t, string(b), `action="t/t1/stop"`, "a stopped thread has no Stop")
	require.Equal(t, harness.StatusStopped, f.detail("t1").Status)
}
