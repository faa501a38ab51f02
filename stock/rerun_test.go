package stock_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/rerun"
	"github.com/seed-7cc7a084/harness/stock"
)

// rerunSession records a thread t1 (a write, then "Done.") and returns a
// session opened for reruns on the same script (or on script, when given),
// as a front end opens it.
func rerunSession(t *testing.T, r stock.Rerun, script ...string) (*stock.Session, stock.Rerun) {
	t.Helper()
	s, spec := driverSession(t, `{"approve": "writes"}`)
	m, err := stock.LoadModel(spec)
	require.NoError(t, err)
	d, err := s.NewDriver(s.Approval, stock.DriverOptions{Model: m})
	require.NoError(t, err)
	th, _, err := d.Start(ctx, "", facts.UserMessage{Text: "Write a.txt"}, "ana", false, nil)
	require.NoError(t, err)
	st, err := d.Finish(ctx, th, d.Options(), nil)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status)
	place := s.Place
	getenv := sessionEnv(t, "")
	require.NoError(t, s.Close())

	if len(script) > 0 {
		spec = filepath.Join(t.TempDir(), "b.jsonl")
		require.NoError(t, os.WriteFile(spec, []byte(script[0]), 0o644))
		spec = "scripted:" + spec
	}
	so := r.SessionOptions(spec, place.Root)
	so.Getenv = getenv
	rs, err := stock.OpenSession(ctx, place, so)
	require.NoError(t, err)
	t.Cleanup(func() { rs.Close() })
	r.Model, err = stock.LoadModel(rs.Model)
	require.NoError(t, err)
	return rs, r
}

// A rerun of one thread on the same script matches it, serves the
// original's write instead of running it, and lists the write as an
// approval a person would have been asked for (the tools' own asking,
// not the session's policy). Going on with it again names its original.
func TestSessionRerunOneThread(t *testing.T) {
	s, r := rerunSession(t, stock.Rerun{Threads: []string{"t1"}})
	require.NoError(t, os.Remove(filepath.Join(s.Place.Root, "a.txt")))
	res, err := s.Rerun(ctx, r)
	require.NoError(t, err)
	require.NotNil(t, res.Report)
	require.Nil(t, res.Rows, "one thread: no suite")
	require.Equal(t, "t1", res.From)
	require.Equal(t, s.Model, res.Model)
	rep := res.Report
	require.Equal(t, "t1", rep.Original)
	require.Equal(t, rerun.ID("t1", res.Key), rep.Rerun)
	require.Equal(t, "matched", rep.Verdict, "%+v", rep)
	require.Equal(t, 1, rep.Served)
	require.Len(t, rep.Approvals, 1, "the original's write was asked")
	require.NoFileExists(t, filepath.Join(s.Place.Root, "a.txt"), "a served call runs nothing")

	again, err := s.Rerun(ctx, stock.Rerun{Model: r.Model, Again: rep.Rerun})
	require.NoError(t, err)
	require.Equal(t, "t1", again.From)
	require.Equal(t, rep.Rerun, again.Report.Rerun)
	require.Equal(t, res.Key, again.Key)

	_, err = s.Rerun(ctx, stock.Rerun{Model: r.Model, Threads: []string{"t9"}})
	require.ErrorIs(t, err, harness.ErrUnknownThread)
}

// A rerun that diverges into a call it does not run lists it among the
// approvals a person would have been asked for, by the tool's own asking
// (a write asks by default), not the session's policy.
func TestSessionRerunDivergesIntoAnAskingCall(t *testing.T) {
	s, r := rerunSession(t, stock.Rerun{Threads: []string{"t1"}}, `{"text": "other", "tool_calls": [{"id": "c1", "name": "write_file", "args": "{\"path\":\"b.txt\",\"content\":\"no\\n\"}"}]}
`)
	res, err := s.Rerun(ctx, r)
	require.NoError(t, err)
	rep := res.Report
	require.Equal(t, rerun.VerdictDiverged, rep.Verdict, "%+v", rep)
	var why []string
	for _, a := range rep.Approvals {
		why = append(why, a.Tool+" "+a.Why)
	}
	require.Contains(t, why, "write_file not run")
	require.NoFileExists(t, filepath.Join(s.Place.Root, "b.txt"))
}

// A system prompt given is offered instead of the original's: it is an
// override, part of the key, and the rerun's configuration records it.
func TestSessionRerunSystemPrompt(t *testing.T) {
	s, r := rerunSession(t, stock.Rerun{Threads: []string{"t1"}, SystemPrompt: []byte("Be terse.")})
	res, err := s.Rerun(ctx, r)
	require.NoError(t, err)
	rep := res.Report
	require.Equal(t, []string{rerun.SystemPromptOverride([]byte("Be terse."))}, rep.Overrides)
	require.True(t, rep.PromptChanged)
	require.NotEqual(t, rerun.Key(s.Model, nil, false), res.Key)
	var prompt string
	for f, err := range s.Store.Read(ctx, rep.Rerun, 1) {
		require.NoError(t, err)
		if f.Kind == facts.KindSystemConfigured {
			c, err := facts.Decode[facts.SystemConfigured](f)
			require.NoError(t, err)
			prompt = c.Prompt
		}
	}
	require.Equal(t, "Be terse.", prompt)
}

// All reruns every thread that is no rerun, as a suite; run again, it
// reruns nothing twice.
func TestSessionRerunAll(t *testing.T) {
	s, r := rerunSession(t, stock.Rerun{All: true, Concurrency: 2})
	var told []string
	r.OnRow = func(row rerun.Row) { told = append(told, row.Thread) }
	res, err := s.Rerun(ctx, r)
	require.NoError(t, err)
	require.Nil(t, res.Report)
	require.Len(t, res.Rows, 1)
	require.Equal(t, "t1", res.Rows[0].Thread)
	require.Empty(t, res.Rows[0].Err)
	require.False(t, res.Rows[0].Again)
	require.Equal(t, []string{"t1"}, told)

	res, err = s.Rerun(ctx, r)
	require.NoError(t, err)
	require.Len(t, res.Rows, 1, "the rerun itself is not rerun")
	require.True(t, res.Rows[0].Again)

	none, err := s.Rerun(ctx, stock.Rerun{Model: r.Model, All: true, Status: harness.StatusFailed})
	require.NoError(t, err)
	require.NotNil(t, none.Rows, "a suite of nothing is an empty list")
	require.Empty(t, none.Rows)
}
