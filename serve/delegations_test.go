package serve_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/serve"
)

// hostileDelegateScript is delegateScript with markup in the task the
// model gives the child.
const hostileDelegateScript = `{"text": "A helper will do it.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Set the TTL <script>alert(1)</script> to 300\"}"}]}
{"text": "Done."}
{"thread": "1-d1", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"thread": "1-d1", "text": "Set."}
`

// TestDelegationsInTheActions: a parent's delegate call is in its
// actions — on the API with the child it made, on the page with a link
// to the child — while the child runs and once the parent is done (with
// the child's outcome); the task, which the model wrote, is text.
func TestDelegationsInTheActions(t *testing.T) {
	f := newFixture(t, hostileDelegateScript)
	require.Equal(t, harness.StatusParked, f.start("t1").Status)
	delegation := func() serve.Action {
		t.Helper()
		var found []serve.Action
		for _, a := range f.detail("t1").Actions {
			if a.Delegation != nil {
				found = append(found, a)
			}
		}
		require.Len(t, found, 1)
		return found[0]
	}
	a := delegation()
	require.Equal(t, "delegate", a.Tool)
	require.Equal(t, "t1.1-d1", a.Delegation.Child)
	require.Equal(t, "Set the TTL <script>alert(1)</script> to 300", a.Delegation.Task)
	require.Equal(t, scheduler.StageStarted, a.Stage)
	require.Empty(t, a.Delegation.Status, "the child still runs")

	_, get := f.browser(t)
	page := get("/t/t1?token=" + token)
	actions := page[strings.Index(page, `id="actions"`):]
	actions = actions[:strings.Index(actions, "</table>")]
	require.Contains(t, actions, `delegate <code class="args">Set the TTL &lt;script&gt;alert(1)&lt;/script&gt; to 300</code> → <a class="child" href="t/t1.1-d1">t1.1-d1</a>`)
	require.Contains(t, actions, "the child runs")
	require.NotContains(t, actions, "<script>")

	// The page's stream brings the row anew when the child reports.
	d := f.detail("t1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, r := f.stream(ctx, "/t/t1/events?from="+strconv.FormatUint(d.Head.Seq+1, 10))
	defer resp.Body.Close()
	p := d.Waits[0]
	body := `{"kind": "confirmation", "request_id": "` + drive.Ref(p) + `", "approved": true, "digest": "` + p.Digest + `"}`
	f.do("POST", "/api/threads/t1/answer", body)
	f.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone && !d.Resuming })
	var row string
	for row == "" {
		var ev struct {
			Kind   facts.Kind `json:"kind"`
			Action *struct {
				ID   string `json:"id"`
				HTML string `json:"html"`
			} `json:"action"`
		}
		require.NoError(t, json.Unmarshal([]byte(readEvents(t, r, 1)[0].data), &ev))
		if ev.Kind == facts.KindChildReported {
			require.NotNil(t, ev.Action, "child.reported comes with its delegation's row")
			require.Equal(t, a.ID, ev.Action.ID)
			row = ev.Action.HTML
		}
	}
	require.Contains(t, row, `<tbody id="action-`+a.ID+`">`)
	require.Contains(t, row, `→ <a class="child" href="t/t1.1-d1">t1.1-d1</a>`)
	require.Contains(t, row, `<span class="badge done">done</span>`)

	a = delegation()
	require.Equal(t, scheduler.StageCompleted, a.Stage)
	require.Equal(t, "done", string(a.Delegation.Status))
	require.Positive(t, a.Delegation.ReportedSeq)
	page = get("/t/t1")
	actions = page[strings.Index(page, `id="actions"`):]
	actions = actions[:strings.Index(actions, "</table>")]
	require.Contains(t, actions, `→ <a class="child" href="t/t1.1-d1">t1.1-d1</a>`, "a finished parent's delegate call links its child")
	require.Contains(t, actions, `<span class="badge done">done</span>`)
	require.NotContains(t, page, "no actions yet")
}
