package stock_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/stock"
)

// driverSession opens a store in a new workspace, with the user's
// settings in user, and returns the spec of a script that writes a file,
// then answers.
func driverSession(t *testing.T, user string) (*stock.Session, string) {
	t.Helper()
	root := t.TempDir()
	script := filepath.Join(root, "s.jsonl")
	require.NoError(t, os.WriteFile(script, []byte(`{"text": "writing", "tool_calls": [{"id": "c1", "name": "write_file", "args": "{\"path\":\"a.txt\",\"content\":\"hi\\n\"}"}]}
{"text": "Done."}
`), 0o644))
	place, err := stock.Locate(root, "")
	require.NoError(t, err)
	s, err := stock.OpenSession(ctx, place, stock.SessionOptions{Getenv: sessionEnv(t, user), Create: true, Drive: true})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, "scripted:" + script
}

// A driver starts a thread, shows each fact as it is appended, records
// the policy it starts with, and drives it to its end with the model it
// loads when a turn is due; a second start of the same id is
// ErrThreadExists, and a thread driven with no model anywhere is
// ErrNoModel.
func TestDriverStartsAndFinishesAThread(t *testing.T) {
	s, spec := driverSession(t, `{"approve": "writes"}`)
	var shown []facts.Kind
	m, err := stock.LoadModel(spec)
	require.NoError(t, err)
	d, err := s.NewDriver(s.Approval, stock.DriverOptions{Model: m, Show: func(f facts.Fact, err error) {
		require.NoError(t, err)
		shown = append(shown, f.Kind)
	}})
	require.NoError(t, err)
	var picked []string
	th, out, err := d.Start(ctx, "", facts.UserMessage{Text: "Write a.txt"}, "ana", false, func(id, taken string) { picked = append(picked, id, taken) })
	require.NoError(t, err)
	require.Equal(t, []string{"t1", ""}, picked)
	require.NotEqual(t, harness.StatusStepLimit, out.Status)
	p, _, ok, err := drive.ThreadPolicy(ctx, th)
	require.NoError(t, err)
	require.True(t, ok, "the user's settings name a rule: the thread records it")
	require.Equal(t, "ana", p.By)

	o := d.Options()
	require.True(t, o.FollowPolicy)
	var warned error
	st, err := d.Finish(ctx, th, o, func(err error) { warned = err })
	require.NoError(t, err)
	require.NoError(t, warned)
	require.Equal(t, harness.StatusDone, st.Status, "%+v", st)
	b, err := os.ReadFile(filepath.Join(s.Place.Root, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "hi\n", string(b))
	require.Contains(t, shown, facts.KindUserMessage)
	require.Contains(t, shown, facts.KindActionCompleted)

	_, _, err = d.Start(ctx, "t1", facts.UserMessage{Text: "again"}, "ana", false, nil)
	require.ErrorIs(t, err, harness.ErrThreadExists)

	bare, err := s.NewDriver(s.Approval, stock.DriverOptions{})
	require.NoError(t, err)
	_, err = bare.LoadModel("")
	require.ErrorIs(t, err, stock.ErrNoModel)
	m, err = bare.LoadModel(spec)
	require.NoError(t, err, "the model the thread recorded")
	require.NotNil(t, m)
}

// The settings' model is loaded for a thread that records none, and a
// model given to the driver wins over both.
func TestDriverLoadsTheModelItIsGiven(t *testing.T) {
	s, spec := driverSession(t, `{"model": "scripted:/nonexistent/s.jsonl"}`)
	d, err := s.NewDriver(s.Approval, stock.DriverOptions{})
	require.NoError(t, err)
	_, err = d.LoadModel("")
	require.Error(t, err, "the settings' model: its script is not there")
	require.False(t, errors.Is(err, stock.ErrNoModel), "%v", err)
	d, err = s.NewDriver(s.Approval, stock.DriverOptions{Spec: spec})
	require.NoError(t, err)
	_, err = d.LoadModel("scripted:other.jsonl")
	require.NoError(t, err, "the driver's spec wins over the recorded one")
}

// A driver reacquires the store it released on the same runtime, and a
// thread that ran the most steps in one go says how to go on.
func TestDriverReacquiresAndSaysTheStepLimit(t *testing.T) {
	s, spec := driverSession(t, "")
	d, err := s.NewDriver(s.Approval, stock.DriverOptions{Spec: spec})
	require.NoError(t, err)
	rt := d.Runtime
	require.NoError(t, d.Release())
	require.NoError(t, d.Reacquire(ctx))
	require.Same(t, rt, d.Runtime)
	_, err = d.Runtime.Store.Head(ctx, "t1")
	require.Error(t, err, "the reopened store answers")

	st := d.StepLimit(drive.State{Thread: "t9", Status: harness.StatusStepLimit})
	require.Contains(t, st.Reason, "steps in one go")
	require.Contains(t, st.Reason, "resume to go on")
	require.Empty(t, d.StepLimit(drive.State{Thread: "t9", Status: harness.StatusDone}).Reason)
}

// Ask posts what the person said to a request the thread waits on, with
// the store released while they think; a skip posts nothing, and what
// the asking returns as an error is returned, nothing posted.
func TestDriverAsksAndPosts(t *testing.T) {
	s, spec := driverSession(t, "")
	m, err := stock.LoadModel(spec)
	require.NoError(t, err)
	d, err := s.NewDriver(s.Approval, stock.DriverOptions{Model: m})
	require.NoError(t, err)
	th, _, err := d.Start(ctx, "t1", facts.UserMessage{Text: "Write a.txt"}, "ana", false, nil)
	require.NoError(t, err)
	st, err := d.Finish(ctx, th, d.Options(), nil)
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, st.Status)
	require.Len(t, st.Waits, 1)
	w := st.Waits[0]

	got, said, err := d.Ask(ctx, th, w, func(context.Context) (stock.Said, error) { return stock.Said{}, nil })
	require.NoError(t, err)
	require.Nil(t, said.Reply)
	require.Zero(t, got.Posted.Seq, "skipped: nothing posted")

	boom := errors.New("the input broke")
	_, _, err = d.Ask(ctx, th, w, func(context.Context) (stock.Said, error) { return stock.Said{}, boom })
	require.ErrorIs(t, err, boom)

	released := false
	got, _, err = d.Ask(ctx, th, w, func(context.Context) (stock.Said, error) {
		released = s.Store == nil
		return stock.Said{Reply: &drive.Reply{Kind: w.Kind, Request: drive.Ref(w), Approved: true, By: "ana"}}, nil
	})
	require.NoError(t, err)
	require.True(t, released, "the store is let go of while the person thinks")
	require.NotZero(t, got.Posted.Seq)
	require.Nil(t, got.Elsewhere)
	st, err = d.Finish(ctx, th, d.Options(), nil)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status, "%+v", st)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err = d.Ask(cctx, th, w, func(context.Context) (stock.Said, error) { return stock.Said{}, nil })
	require.Error(t, err, "interrupted")
}
