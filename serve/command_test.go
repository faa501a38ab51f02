package serve_test

import (
	"html"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/serve"
)

// TestPageShowsACommandVerbatim: a pending command's card shows the
// command as written — "&&", ">" and quotes, not JSON escapes — each line
// escaped as the terminal escapes it, with its timeout: the call's own,
// or the workspace's default said as such.
func TestPageShowsACommandVerbatim(t *testing.T) {
	script := `{"text": "Running.", "tool_calls": [{"id": "c1", "name": "run_command", "args": "{\"command\":\"go vet ./... && echo 'ok' > out.txt\\nprintf '\\u001b[2J'\"}"}]}
{"text": "Again.", "tool_calls": [{"id": "c2", "name": "run_command", "args": "{\"command\":\"sleep 1 && echo done\",\"timeout_seconds\":7.5}"}]}
{"text": "Done."}`
	f := newFixture(t, script)
	f.start("t1")
	_, get := f.browser(t)
	get("/?token=" + token)
	raw := get("/t/t1")
	page := html.UnescapeString(raw)
	require.Contains(t, page, `<pre class="command">go vet ./... && echo 'ok' > out.txt
printf '\x1b[2J'
</pre>`)
	require.NotContains(t, raw, `\u0026`)
	require.NotContains(t, raw, "\x1b")
	require.Contains(t, page, "timeout 120s (the default): the command is stopped then")

	d := f.detail("t1")
	resp, b := f.do("POST", "/api/threads/t1/answer", approveBody(d, true, true))
	require.Equal(t, 201, resp.StatusCode, string(b))
	f.waitFor("t1", "the second command asked", func(d serve.ThreadDetail) bool {
		return len(d.Waits) == 1 && d.Waits[0].RequestID == "2-c2" && !d.Resuming
	})
	page = html.UnescapeString(get("/t/t1"))
	require.Contains(t, page, `<pre class="command">sleep 1 && echo done`)
	require.Contains(t, page, "timeout 7.5s: the command is stopped then")
}

// TestPageSaysADeniedCallDidNotRun: an action whose call was denied says
// "not run (denied)", and its declared check says it never ran, not
// "(not yet)".
func TestPageSaysADeniedCallDidNotRun(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1")
	_, get := f.browser(t)
	get("/?token=" + token)
	require.Contains(t, get("/t/t1"), "(not yet)", "asked, not answered")
	d := f.detail("t1")
	resp, b := f.do("POST", "/api/threads/t1/answer", approveBody(d, false, false))
	require.Equal(t, 201, resp.StatusCode, string(b))
	page := get("/t/t1")
	require.Contains(t, page, "<td>not run (denied)</td>")
	require.Contains(t, page, "(not run: denied)")
	require.NotContains(t, page, "(not yet)")
	require.True(t, f.detail("t1").Actions[0].Denied)
}
