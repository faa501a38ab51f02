package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/serve"
)

// TestPageFollowsFacts: the page's stream brings each fact of an action
// with that action's row as it stands, which the page puts in place of
// the one it has; the panel it asks for again holds what waits and the
// verdict, kept up to date — a fact appended behind the runtime's back
// turns it to "does not verify" at once — and no actions table.
func TestPageFollowsFacts(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1")
	panel := func() string {
		t.Helper()
		resp, b := f.do("GET", "/t/t1/panel", "")
		require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
		return string(b)
	}
	p := panel()
	require.Contains(t, p, `id="verdict" class="verdict pass"`)
	require.Contains(t, p, "5 facts: the hash chain is intact")
	require.Contains(t, p, "Confirm <code>1-call_1</code>")
	require.NotContains(t, p, `id="action-`, "the actions table is the page's, applied from the stream")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, r := f.stream(ctx, "/t/t1/events?from=6")
	defer resp.Body.Close()
	_, b := f.do("POST", "/api/threads/t1/answer", approveBody(f.detail("t1"), true, true))
	require.Contains(t, string(b), `"resuming": true`)
	// confirmation.answered, action.started, action.completed,
	// check.recorded, model.turn.
	type row struct {
		ID, HTML string
	}
	var rows []row
	for _, e := range readEvents(t, r, 5) {
		var ev struct {
			Kind   facts.Kind `json:"kind"`
			HTML   string     `json:"html"`
			Action *struct {
				ID   string `json:"id"`
				HTML string `json:"html"`
			} `json:"action"`
		}
		require.NoError(t, json.Unmarshal([]byte(e.data), &ev))
		require.Contains(t, ev.HTML, `class="fact kind-`)
		switch ev.Kind {
		case facts.KindActionStarted, facts.KindActionCompleted, facts.KindCheckRecorded:
			require.NotNil(t, ev.Action, "%s comes with its action's row", ev.Kind)
			rows = append(rows, row{ev.Action.ID, ev.Action.HTML})
		default:
			require.Nil(t, ev.Action, "%s is no action's", ev.Kind)
		}
	}
	require.Len(t, rows, 3)
	for _, r := range rows {
		require.Equal(t, "1-call_1", r.ID)
		require.Contains(t, r.HTML, `<tbody id="action-1-call_1">`)
	}
	require.Contains(t, rows[2].HTML, `<span class="verdict pass">file_equals: pass</span>`, "the row after the check shows it")

	f.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone })
	p = panel()
	require.Contains(t, p, `class="verdict pass"`)
	require.NotContains(t, p, "Confirm <code>")

	// A fact the fold never enabled, appended to the store directly.
	h := f.head("t1")
	d, err := facts.NewDraft(facts.KindModelTurn, "infer/turn/9", facts.ModelTurn{Turn: 9, Text: "forged"})
	require.NoError(t, err)
	_, err = f.store.Append(context.Background(), "t1", h, d)
	require.NoError(t, err)
	p = panel()
	require.Contains(t, p, `class="verdict fail"`)
	require.Contains(t, p, "never enabled infer/turn/9")
}
