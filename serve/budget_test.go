package serve_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
)

// budgetTreeScript: the parent delegates one task; the child reads twice
// and answers, the parent answers. Every turn reads 10000 tokens.
const budgetTreeScript = `{"text": "Delegating.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Read cache.toml twice\",\"tools\":[\"read_file\"]}"}], "usage": {"input_tokens": 10000}}
{"text": "Read.", "usage": {"input_tokens": 10000}}
{"thread": "1-d1", "text": "r1", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"cache.toml\"}"}], "usage": {"input_tokens": 10000}}
{"thread": "1-d1", "text": "r2", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"cache.toml\"}"}], "usage": {"input_tokens": 10000}}
{"thread": "1-d1", "text": "read twice", "usage": {"input_tokens": 10000}}`

// startBudgeted starts thread id with a budget of 25000 tokens: the
// child's second turn would pass it, and the tree parks on the child's
// budget wait.
func (f *fixture) startBudgeted(id string) {
	f.t.Helper()
	m, err := stock.LoadModel(f.script)
	require.NoError(f.t, err)
	svc, err := f.stock.Services(m, stock.BlobsOf(f.store))
	require.NoError(f.t, err)
	rt, err := harness.NewRuntime(f.srv.Store(), svc, f.stock.Config)
	require.NoError(f.t, err)
	d, err := facts.NewDraft(facts.KindBudgetSet, "", facts.BudgetSet{Limit: facts.Spend{Tokens: 25000}, By: "ana", Source: "flag"})
	require.NoError(f.t, err)
	out, err := rt.Thread(f.stock.Actor, id).Start(context.Background(), "Read the cache twice", harness.Ingress{Draft: d, Key: "budget"})
	require.NoError(f.t, err)
	require.Equal(f.t, harness.StatusParked, out.Status, out.Reason)
	require.Equal(f.t, fold.WaitBudget, out.Waits[len(out.Waits)-1].Kind, "%+v", out.Waits)
}

var budgetForm = regexp.MustCompile(`(?s)<form method="post" action="(t/[^"]+/answer)"[^>]*>\s*<input type="hidden" name="csrf" value="([0-9a-f]+)">\s*<input type="hidden" name="kind" value="budget">\s*<input type="hidden" name="request" value="([^"]+)">`)

// TestPageRaisesABudget: the page of a tree parked on its budget has a
// raise form (behind the page's CSRF token); what it posts is refused
// unless it is an amount; posted from a child's page it raises the
// root's budget, as the page's person, and the server resumes the tree
// to done.
func TestPageRaisesABudget(t *testing.T) {
	f := newFixture(t, budgetTreeScript)
	f.startBudgeted("t1")
	c, get := f.browser(t)
	get("/?token=" + token)
	page := get("/t/t1.1-d1")
	m := budgetForm.FindStringSubmatch(page)
	require.NotNil(t, m, "the child's page has a raise form:\n%s", page)
	require.Equal(t, "t/t1.1-d1/answer", m[1])
	require.Equal(t, "budget", html.UnescapeString(m[3]))
	require.Contains(t, page, "cannot cover the next turn")
	page = get("/t/t1")
	require.Regexp(t, `name="request" value="t1.1-d1/budget"`, page, "the root's page offers its child's wait")
	require.Contains(t, page, "the tree (t1) spent 20000 tokens of its budget of 25000 tokens", "what the tree spent, on the page")
	require.Regexp(t, `1 model turn · 10000 tokens · 1 turn not priced \(tokens only\) · the tree`, page, "the scripted model has no price")

	post := func(path string, form url.Values) (int, string) {
		t.Helper()
		resp, err := c.PostForm(f.http.URL+"/"+path, form)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	n1, n2 := len(f.kinds("t1")), len(f.kinds("t1.1-d1"))
	base := url.Values{"csrf": {m[2]}, "kind": {"budget"}, "request": {"budget"}}
	with := func(k, v string) url.Values {
		u := url.Values{}
		for key, vs := range base {
			u[key] = vs
		}
		u.Set(k, v)
		return u
	}
	for _, bad := range []url.Values{
		with("tokens", "-5"), with("tokens", "1e3"), with("tokens", "99999999999999999999"),
		with("usd", "NaN"), with("usd", "-1"), with("usd", "Inf"), with("usd", "1e400"),
		base, // no amount
	} {
		code, body := post(m[1], bad)
		require.Contains(t, body, "budget", "%v → %d", bad, code)
		require.NotEqual(t, http.StatusSeeOther, code)
	}
	// No CSRF token: refused before anything is read.
	noCSRF := with("tokens", "100000")
	noCSRF.Del("csrf")
	code, _ := post(m[1], noCSRF)
	require.Equal(t, http.StatusForbidden, code)
	require.Len(t, f.kinds("t1"), n1, "nothing was appended")
	require.Len(t, f.kinds("t1.1-d1"), n2)

	code, body := post(m[1], with("tokens", "100000"))
	require.Equal(t, http.StatusOK, code, body)
	raised, err := facts.Decode[facts.BudgetRaised](f.last("t1", facts.KindBudgetRaised))
	require.NoError(t, err)
	require.Equal(t, facts.BudgetRaised{Add: facts.Spend{Tokens: 100000}, By: "ana"}, raised)
	d := f.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone })
	require.Equal(t, facts.Spend{Tokens: 125000}, d.Budget.Limit)
	require.Equal(t, int64(50000), d.Budget.Spent.Tokens)
}

// TestAPIRaisesABudget: an answer of kind budget raises the tree's
// budget on its root (named through a child or the root), as the
// token's person; the server resumes the tree; an answer with no amount,
// or a negative one, is refused.
func TestAPIRaisesABudget(t *testing.T) {
	f := newFixture(t, budgetTreeScript)
	f.startBudgeted("t1")
	n := len(f.kinds("t1"))
	for _, body := range []string{
		`{"kind": "budget", "request_id": "budget"}`,
		`{"kind": "budget", "request_id": "budget", "tokens": -1}`,
		`{"kind": "budget", "request_id": "budget", "usd": -0.5}`,
		`{"kind": "budget", "request_id": "budget", "usd": "5"}`,
		`{"kind": "budget", "request_id": "budget", "tokens": 5, "by": "mallory"}`,
	} {
		resp, b := f.do("POST", "/api/threads/t1/answer", body)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", body, b)
	}
	require.Len(t, f.kinds("t1"), n, "nothing was appended")

	d := f.detail("t1")
	require.Equal(t, facts.Spend{Tokens: 25000}, d.Budget.Limit)
	resp, b := f.do("POST", "/api/threads/t1.1-d1/answer", `{"kind": "budget", "request_id": "budget", "tokens": 100000}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(b))
	require.Contains(t, string(b), `"thread": "t1"`)
	require.Contains(t, string(b), `"resuming": true`)
	raised, err := facts.Decode[facts.BudgetRaised](f.last("t1", facts.KindBudgetRaised))
	require.NoError(t, err)
	require.Equal(t, "ana", raised.By)
	f.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone })
}
