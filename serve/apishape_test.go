package serve_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/tell"
)

// snakeKey is how every key of the API's JSON is spelled.
var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// freeForm are the keys whose values are not the API's own documents: a
// call's arguments (the model's), a tool's input schema (JSON Schema's
// own names), an MCP server's answer content.
var freeForm = map[string]bool{"args": true, "schema": true, "content": true, "structured": true}

// checkShape walks a JSON body and reports each key that is not
// snake_case, each null (a list is [] and an absent value left out), and
// each time ("at", "…_at") that is not RFC 3339 — under path.
func checkShape(path string, v any, bad *[]string) {
	switch v := v.(type) {
	case nil:
		*bad = append(*bad, path+": null")
	case []any:
		for i, e := range v {
			checkShape(fmt.Sprintf("%s[%d]", path, i), e, bad)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			p := path + "." + k
			if !snakeKey.MatchString(k) {
				*bad = append(*bad, p+": not snake_case")
			}
			// A time is a string in RFC 3339; "at" is a seq where a
			// fork's document says where it forked (as --at and ?at= do).
			if _, seq := v[k].(float64); strings.HasSuffix(k, "_at") || k == "at" && !seq {
				s, ok := v[k].(string)
				if _, err := time.Parse(time.RFC3339Nano, s); !ok || err != nil {
					*bad = append(*bad, fmt.Sprintf("%s: %v is not an RFC 3339 time", p, v[k]))
				}
			}
			if !freeForm[k] {
				checkShape(p, v[k], bad)
			}
		}
	}
}

// keysOf is the sorted keys of the JSON object b (at the path of keys
// and indexes given), failing the test if it is not one.
func keysOf(t *testing.T, b []byte, path ...any) []string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			require.True(t, ok, "%s: not an object in %s", p, b)
			v = m[p]
		case int:
			l, ok := v.([]any)
			require.True(t, ok && p < len(l), "[%d]: not in a list in %s", p, b)
			v = l[p]
		}
	}
	m, ok := v.(map[string]any)
	require.True(t, ok, "%v: not an object in %s", path, b)
	return slices.Sorted(maps.Keys(m))
}

// keysOfValue is the sorted keys v encodes to.
func keysOfValue(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return keysOf(t, b)
}

// TestAPISpeaksSnakeCase: every route's answer — of a store with a thread
// whose write was undoable (t1), one whose call was refused (t2) and one
// that waits (t3) — has snake_case keys only, no null, and its times in
// RFC 3339; the routes that answered with Go's field names (effects, the
// undo's plan and refusal, the replay's action records) have the keys
// their documents list, and those the command line prints the same
// things with (harness effects, undo, fork -o json).
func TestAPISpeaksSnakeCase(t *testing.T) {
	f := doneThread(t)
	f.start("t2")
	resp, b := f.do("POST", "/api/threads/t2/answer", approveBody(f.detail("t2"), false, true))
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(b))
	f.waitFor("t2", "the denial's end", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone && !d.Resuming })
	f.start("t3")

	bodies := map[string][]byte{}
	call := func(method, path, body string, status int) []byte {
		t.Helper()
		resp, b := f.do(method, path, body)
		require.Equal(t, status, resp.StatusCode, "%s %s: %s", method, path, b)
		bodies[method+" "+path] = b
		return b
	}
	for _, p := range []string{"/api/threads", "/api/threads/t1", "/api/threads/t2", "/api/threads/t3", "/api/threads/t3/state",
		"/api/threads/t1/facts", "/api/threads/t1/replay", "/api/threads/t2/replay", "/api/threads/t1/fork?at=3", "/api/threads/t3/fork?at=5",
		"/api/search?q=cache"} {
		call("GET", p, "", http.StatusOK)
	}
	call("GET", "/api/threads/t9", "", http.StatusNotFound)
	call("POST", "/api/threads/t3/plan", `{"on": true}`, http.StatusCreated)

	// The effects: each a document of harness effects -o json's keys.
	effects := call("GET", "/api/effects", "", http.StatusOK)
	require.Equal(t, []string{"action_id", "at", "changed", "check", "effect_state", "open", "report", "seq", "stage", "thread", "tool"}, keysOf(t, effects, 0), "t1's write: %s", effects)
	require.Equal(t, []string{"action_id", "at", "effect_state", "open", "report", "seq", "stage", "thread", "tool"}, keysOf(t, effects, 1), "t2's refused call changed nothing: %s", effects)
	require.Equal(t, []string{"action_id", "at", "open", "seq", "stage", "thread", "tool"}, keysOf(t, effects, 2), "t3's call waits: %s", effects)

	// The replay's record of an action.
	replay := call("GET", "/api/threads/t1/replay", "", http.StatusOK)
	var rep serve.Replay
	require.NoError(t, json.Unmarshal(replay, &rep))
	completed := slices.IndexFunc(rep.Entries, func(e serve.ReplayEntry) bool { return e.Action != nil })
	require.NotEqual(t, -1, completed, "%s", replay)
	require.Equal(t, []string{"action", "fact", "summary"}, keysOf(t, replay, "entries", completed))
	require.Equal(t, []string{"action_id", "check", "effect_state", "observation", "report", "tool"}, keysOf(t, replay, "entries", completed, "action"))

	// The undo's preview and the undo, as harness undo -o json says them.
	stepKeys := []string{"action", "left", "left_mode", "path", "restore", "restore_mode", "seqs"}
	preview := call("GET", "/api/threads/t1/undo?to=0", "", http.StatusOK)
	require.Equal(t, []string{"head", "steps", "thread", "to"}, keysOf(t, preview))
	require.Equal(t, stepKeys, keysOf(t, preview, "steps", 0))
	var plan struct {
		Head uint64 `json:"head"`
	}
	require.NoError(t, json.Unmarshal(preview, &plan))
	require.NotZero(t, plan.Head, "%s", preview)
	var cli map[string]any
	require.NoError(t, json.Unmarshal(mustJSON(t, tell.UndoDocOf("t1", 0, true, planOf(t, preview))), &cli))
	require.Equal(t, slices.Sorted(slices.Values(append(keysOf(t, preview), "dry_run"))), slices.Sorted(maps.Keys(cli)), "the command line's document is the plan, and whether it was a dry run")

	// Refused: the paths and why, in both the preview and the undo.
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "cache.toml"), []byte("someone else's\n"), 0o644))
	for _, refused := range [][]byte{
		call("GET", "/api/threads/t1/undo?to=0", "", http.StatusConflict),
		call("POST", "/api/threads/t1/undo", fmt.Sprintf(`{"to": 0, "head": %d}`, plan.Head), http.StatusConflict),
	} {
		require.Equal(t, []string{"code", "conflicts", "error", "plan"}, keysOf(t, refused), "%s", refused)
		require.Equal(t, []string{"left", "left_mode", "now", "now_mode", "path", "reason"}, keysOf(t, refused, "conflicts", 0))
		require.Equal(t, []string{"head", "steps", "thread", "to"}, keysOf(t, refused, "plan"))
		require.Contains(t, string(refused), `"steps": []`, "no steps is an empty list")
	}
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "cache.toml"), []byte("ttl_seconds = 300\n"), 0o644))
	undone := call("POST", "/api/threads/t1/undo", fmt.Sprintf(`{"to": 0, "head": %d}`, plan.Head), http.StatusOK)
	require.Equal(t, []string{"head", "steps", "thread", "to"}, keysOf(t, undone))
	require.Equal(t, stepKeys, keysOf(t, undone, "steps", 0))
	require.Equal(t, "ttl_seconds = 60\n", f.read("cache.toml"))

	// A fork, as harness fork -o json says it.
	forked := call("POST", "/api/threads/t1/fork", `{"at": 3}`, http.StatusCreated)
	require.Equal(t, keysOfValue(t, tell.ForkDoc{Thread: "x", From: "t1", At: 3, Seq: 4, Status: harness.StatusResumable}), keysOf(t, forked))
	var fr serve.ForkResult
	require.NoError(t, json.Unmarshal(forked, &fr))
	require.Equal(t, serve.ForkResult{Thread: "t1-at3", From: "t1", At: 3, Seq: 4, Status: harness.StatusResumable}, fr)
	// A fork's preview names each wait as an answer names it.
	require.Contains(t, string(bodies["GET /api/threads/t3/fork?at=5"]), `"ref": "1-call_1"`)

	call("POST", "/api/threads/t3/stop", `{"reason": "enough"}`, http.StatusOK)
	call("POST", "/api/threads/t1/resume", "", http.StatusAccepted)

	for _, route := range slices.Sorted(maps.Keys(bodies)) {
		var v any
		require.NoError(t, json.Unmarshal(bodies[route], &v), route)
		var bad []string
		checkShape("", v, &bad)
		require.Empty(t, bad, "%s answers %s", route, bodies[route])
	}
}

// TestShapeCheckCatches: the walk TestAPISpeaksSnakeCase makes finds a
// Go-cased key, a null and a time in another format, however deep.
func TestShapeCheckCatches(t *testing.T) {
	for body, want := range map[string]string{
		`[{"thread": "t1", "ActionID": "1-a"}]`:             `[0].ActionID: not snake_case`,
		`{"plan": {"Steps": []}}`:                           `.plan.Steps: not snake_case`,
		`{"changed": null}`:                                 `.changed: null`,
		`{"head": {"at": "1764900000"}}`:                    `.head.at: 1764900000 is not an RFC 3339 time`,
		`{"report": {"ended_at": 1764900000}}`:              `.report.ended_at: 1.7649e+09 is not an RFC 3339 time`,
		`{"report": {"started_at": "05/12/2026 03:00"}}`:    `.report.started_at: 05/12/2026 03:00 is not an RFC 3339 time`,
		`{"waits": [{"kind": "question", "requestID": 1}]}`: `.waits[0].requestID: not snake_case`,
	} {
		var v any
		require.NoError(t, json.Unmarshal([]byte(body), &v))
		var bad []string
		checkShape("", v, &bad)
		require.Equal(t, []string{want}, bad, body)
	}
	var v any
	require.NoError(t, json.Unmarshal([]byte(`{"args": {"Path": "x", "n": null}, "at": "2026-12-05T03:24:00Z"}`), &v))
	var bad []string
	checkShape("", v, &bad)
	require.Empty(t, bad, "a call's arguments are the model's")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// planOf is the undo plan a body holds.
func planOf(t *testing.T, b []byte) rewind.UndoPlan {
	t.Helper()
	var p rewind.UndoPlan
	require.NoError(t, json.Unmarshal(b, &p))
	require.NotEmpty(t, p.Steps, "%s", b)
	return p
}
