package serve_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
)

// turnsScript: a read, then the answer: two model turns.
const turnsScript = `{"text": "r1", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"cache.toml\"}"}]}
{"text": "read it"}`

// startTurnBound starts thread id with a bound of one model turn, which
// it records: it parks on the budget wait after its first turn, whatever
// the server's own configuration says.
func (f *fixture) startTurnBound(id string) {
	f.t.Helper()
	cfg, err := harness.NewConfig(harness.WithModelName(f.script), harness.WithModelBackoff(0), harness.WithBudget(1, 0))
	require.NoError(f.t, err)
	st, err := stock.NewStock(f.place, cfg)
	require.NoError(f.t, err)
	m, err := stock.LoadModel(f.script)
	require.NoError(f.t, err)
	svc, err := st.Services(m, stock.BlobsOf(f.store))
	require.NoError(f.t, err)
	rt, err := harness.NewRuntime(f.srv.Store(), svc, st.Config)
	require.NoError(f.t, err)
	out, err := rt.Thread(st.Actor, id).Start(context.Background(), "Read the cache")
	require.NoError(f.t, err)
	require.Equal(f.t, harness.StatusParked, out.Status, out.Reason)
	require.Equal(f.t, fold.WaitBudget, out.Waits[0].Kind, "%+v", out.Waits)
}

// TestAPIRaisesTurns: a thread that ran its bound in turns waits on the
// budget wait, on the page (with a field for turns) and through the API;
// a raise of no turns, or fewer, is refused; one of a turn is recorded as
// the token's person's and the server resumes the thread to done.
func TestAPIRaisesTurns(t *testing.T) {
	f := newFixture(t, turnsScript)
	f.startTurnBound("t1")
	c, get := f.browser(t)
	get("/?token=" + token)
	page := get("/t/t1")
	m := budgetForm.FindStringSubmatch(page)
	require.NotNil(t, m, "the page has a raise form:\n%s", page)
	require.Contains(t, page, `name="turns"`)
	require.Contains(t, page, "the thread ran its 1 model turn")

	n := len(f.kinds("t1"))
	for _, v := range []string{"-1", "1.5", "abc", "99999999999"} {
		resp, err := c.PostForm(f.http.URL+"/"+m[1], url.Values{"csrf": {m[2]}, "kind": {"budget"}, "request": {"budget"}, "turns": {v}})
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Contains(t, string(b), "want a whole number of model turns ≥ 0", "%s → %d, the page says what went wrong", v, resp.StatusCode)
	}
	for _, body := range []string{
		`{"kind": "budget", "request_id": "budget", "turns": 0}`,
		`{"kind": "budget", "request_id": "budget", "turns": -1}`,
		`{"kind": "budget", "request_id": "budget", "turns": "1"}`,
	} {
		resp, b := f.do("POST", "/api/threads/t1/answer", body)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", body, b)
	}
	require.Len(t, f.kinds("t1"), n, "nothing was appended")

	resp, b := f.do("POST", "/api/threads/t1/answer", `{"kind": "budget", "request_id": "budget", "turns": 1}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(b))
	raised, err := facts.Decode[facts.BudgetRaised](f.last("t1", facts.KindBudgetRaised))
	require.NoError(t, err)
	require.Equal(t, facts.BudgetRaised{Add: facts.Spend{Turns: 1}, By: "ana"}, raised)
	d := f.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone })
	require.Equal(t, 2, d.MaxTurns)
}
