package serve_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
)

// TestPageListShowsTasksNewestFirst: the page's list shows each thread's
// task, model and tokens, the thread active last first, and keeps one
// status when asked (an unknown status is refused).
func TestPageListShowsTasksNewestFirst(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1")
	time.Sleep(10 * time.Millisecond)
	f.start("t2")
	_, get := f.browser(t)
	list := get("/?token=" + token)
	i1, i2 := strings.Index(list, `<a href="t/t1">t1</a>`), strings.Index(list, `<a href="t/t2">t2</a>`)
	require.Positive(t, i1)
	require.Positive(t, i2)
	require.Less(t, i2, i1, "the thread active last first")
	require.Contains(t, list, `<td class="title">Set the cache TTL to 300</td>`)
	require.Contains(t, list, "<code>"+f.script+"</code>", "the model")
	require.Contains(t, get("/?status=parked"), `<a href="t/t1">t1</a>`)
	done := get("/list?status=done")
	require.NotContains(t, done, `<a href="t/t1">t1</a>`)
	require.Contains(t, done, "no done threads")
	resp, b := f.do("GET", "/?status=%3Cscript%3E", "")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(b))
	require.NotContains(t, string(b), "<script>")
}
