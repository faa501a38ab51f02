package drive_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// approveAll is an Ask that approves every confirmation, as a person at a
// prompt would, and counts the times it was asked.
func approveAll(e *harnesstest.Env, asked *int) func(context.Context, *harness.Thread, []drive.Pending) (int, error) {
	return func(ctx context.Context, _ *harness.Thread, waits []drive.Pending) (int, error) {
		*asked++
		for _, w := range waits {
			d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: w.RequestID, Approved: true, By: "ana", Digest: w.Digest})
			if err != nil {
				return 0, err
			}
			if _, err := drive.PostAnswer(ctx, e.Thread("t"), d, drive.AnswerKey(d.Kind, w.RequestID)); err != nil {
				return 0, err
			}
		}
		return len(waits), nil
	}
}

func TestDriveParked(t *testing.T) {
	start := func(t *testing.T) *harnesstest.Env {
		e := harnesstest.New(t, harnesstest.ToolScript)
		out, err := e.RT.Start(ctx, e.Actor, "t", "Set the TTL")
		require.NoError(t, err)
		require.Equal(t, harness.StatusParked, out.Status)
		return e
	}
	t.Run("without Ask it returns the parked state and runs nothing", func(t *testing.T) {
		e := start(t)
		before := len(e.Kinds("t"))
		st, err := drive.Drive(ctx, e.Thread("t"), drive.Options{})
		require.NoError(t, err)
		require.Equal(t, harness.StatusParked, st.Status)
		require.Len(t, st.Waits, 1)
		require.Equal(t, "1-call_1", st.Waits[0].RequestID)
		require.Equal(t, "write_file", st.Waits[0].Tool)
		require.Len(t, e.Kinds("t"), before, "nothing appended")
		require.Zero(t, e.Runs.Load())
	})
	t.Run("an Ask that approves drives it to done", func(t *testing.T) {
		e := start(t)
		asked := 0
		st, err := drive.Drive(ctx, e.Thread("t"), drive.Options{Ask: approveAll(e, &asked)})
		require.NoError(t, err)
		require.Equal(t, harness.StatusDone, st.Status)
		require.Equal(t, 1, asked)
		require.EqualValues(t, 1, e.Runs.Load())
		require.Equal(t, 2, e.Model.Calls())
		require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Actor, "t"))
	})
	t.Run("an Ask that answers nothing leaves it parked", func(t *testing.T) {
		e := start(t)
		asked := 0
		st, err := drive.Drive(ctx, e.Thread("t"), drive.Options{Ask: func(context.Context, *harness.Thread, []drive.Pending) (int, error) {
			asked++
			return 0, nil
		}})
		require.NoError(t, err)
		require.Equal(t, harness.StatusParked, st.Status)
		require.Equal(t, 1, asked)
	})
	t.Run("an Ask's error is returned as it is", func(t *testing.T) {
		e := start(t)
		gone := errors.New("the person went home")
		st, err := drive.Drive(ctx, e.Thread("t"), drive.Options{Ask: func(context.Context, *harness.Thread, []drive.Pending) (int, error) {
			return 0, gone
		}})
		require.Same(t, gone, err)
		require.Equal(t, harness.StatusParked, st.Status)
	})
	t.Run("the approval answers what it decides; Ask is not called", func(t *testing.T) {
		e := start(t)
		all, err := drive.NewApproval("all", nil, nil)
		require.NoError(t, err)
		st, err := drive.Drive(ctx, e.Thread("t"), drive.Options{Approval: all, Ask: func(context.Context, *harness.Thread, []drive.Pending) (int, error) {
			t.Fatal("asked a person what the approval decides")
			return 0, nil
		}})
		require.NoError(t, err)
		require.Equal(t, harness.StatusDone, st.Status)
		answered, err := facts.Decode[facts.ConfirmationAnswered](e.Last("t", facts.KindConfirmationAnswered))
		require.NoError(t, err)
		require.Equal(t, drive.PolicyBy, answered.By)
	})
}

// A thread answered from outside, but not resumed, is resumable: Drive
// resumes it to done.
func TestDriveResumableToDone(t *testing.T) {
	e := harnesstest.New(t, harnesstest.ToolScript)
	_, err := e.RT.Start(ctx, e.Actor, "t", "Set the TTL")
	require.NoError(t, err)
	e.Approve("t", "1-call_1", true)
	st, err := drive.Inspect(ctx, e.Thread("t"))
	require.NoError(t, err)
	require.Equal(t, harness.StatusResumable, st.Status)

	var resumed []drive.State
	st, err = drive.Drive(ctx, e.Thread("t"), drive.Options{
		Resume: func(ctx context.Context, _ *harness.Thread, st drive.State) (harness.Outcome, error) {
			resumed = append(resumed, st)
			return e.RT.Resume(ctx, e.Actor, "t")
		},
	})
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status)
	require.Len(t, resumed, 1, "one Resume ran it to done")
	require.Equal(t, harness.StatusResumable, resumed[0].Status)
	require.EqualValues(t, 1, e.Runs.Load())

	// Done stays done: Drive again runs nothing.
	n := len(e.Kinds("t"))
	st, err = drive.Drive(ctx, e.Thread("t"), drive.Options{})
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status)
	require.Len(t, e.Kinds("t"), n)
}

func TestDriveRetriesAFailedTurnOnce(t *testing.T) {
	failed := func(t *testing.T, script string) *harnesstest.Env {
		e := harnesstest.New(t, script, func(c *harness.Config) { c.ModelAttempts = 5 })
		out, err := e.RT.Start(ctx, e.Actor, "t", "hi")
		require.NoError(t, err)
		require.Equal(t, harness.StatusFailed, out.Status)
		require.Equal(t, 1, e.Model.Calls())
		return e
	}
	t.Run("not when retry is not allowed", func(t *testing.T) {
		e := failed(t, `{"fail": ["permission"], "text": "fine"}`)
		st, err := drive.Drive(ctx, e.Thread("t"), drive.Options{OnRetry: func(drive.State) { t.Fatal("retried") }})
		require.NoError(t, err)
		require.Equal(t, harness.StatusFailed, st.Status)
		require.Equal(t, "infer/turn/1", st.Retry)
		require.Equal(t, 1, e.Model.Calls(), "the turn is not run again")
	})
	t.Run("once when allowed, and it can succeed", func(t *testing.T) {
		e := failed(t, `{"fail": ["permission"], "text": "fine"}`)
		var retries []drive.State
		st, err := drive.Drive(ctx, e.Thread("t"), drive.Options{Retry: true, OnRetry: func(st drive.State) { retries = append(retries, st) }})
		require.NoError(t, err)
		require.Equal(t, harness.StatusDone, st.Status)
		require.Equal(t, 2, e.Model.Calls())
		require.Len(t, retries, 1)
		require.Equal(t, harness.StatusFailed, retries[0].Status)
		require.Contains(t, retries[0].Reason, "permission")
	})
	t.Run("once when allowed, not in a loop", func(t *testing.T) {
		e := failed(t, `{"fail": ["permission", "permission", "permission"], "text": "fine"}`)
		retries := 0
		st, err := drive.Drive(ctx, e.Thread("t"), drive.Options{Retry: true, OnRetry: func(drive.State) { retries++ }})
		require.NoError(t, err)
		require.Equal(t, harness.StatusFailed, st.Status)
		require.Equal(t, 1, retries)
		require.Equal(t, 2, e.Model.Calls())
	})
}

func TestDriveStopsAtTheStepLimit(t *testing.T) {
	read := `{"tool_calls": [{"id": "r", "name": "read_file", "args": "{}"}]}` + "\n"
	e := harnesstest.New(t, read+read+read+read+`{"text": "read it"}`, harness.WithMaxSteps(2))
	out, err := e.RT.Start(ctx, e.Actor, "t", "read")
	require.NoError(t, err)
	require.Equal(t, harness.StatusStepLimit, out.Status)
	st, err := drive.StepLimited(ctx, e.Thread("t"), out)
	require.NoError(t, err)
	require.Equal(t, harness.StatusStepLimit, st.Status)
	require.Contains(t, st.Reason, "ran 2 steps in one go")

	// Each Drive runs one Resume's worth and stops; the thread stays
	// resumable, and drives on to done.
	drives := 0
	for st.Status == harness.StatusStepLimit {
		seq := st.Head.Seq
		st, err = drive.Drive(ctx, e.Thread("t"), drive.Options{})
		require.NoError(t, err)
		require.Greater(t, st.Head.Seq, seq, "every drive goes on")
		if st.Status == harness.StatusStepLimit {
			require.Contains(t, st.Reason, "ran 2 steps in one go")
			in, err := drive.Inspect(ctx, e.Thread("t"))
			require.NoError(t, err)
			require.Equal(t, harness.StatusResumable, in.Status)
		}
		drives++
		require.Less(t, drives, 20)
	}
	require.Equal(t, harness.StatusDone, st.Status)
	require.Greater(t, drives, 1)
	require.EqualValues(t, 4, e.Runs.Load())
}

// A Resume that runs nothing though the thread is resumable would make
// Drive spin: the second in a row is an error.
func TestDriveRefusesToSpin(t *testing.T) {
	e := harnesstest.New(t, harnesstest.ToolScript)
	_, err := e.RT.Start(ctx, e.Actor, "t", "Set the TTL")
	require.NoError(t, err)
	e.Approve("t", "1-call_1", true)
	resumes := 0
	st, err := drive.Drive(ctx, e.Thread("t"), drive.Options{
		Resume: func(_ context.Context, _ *harness.Thread, st drive.State) (harness.Outcome, error) {
			resumes++
			return harness.Outcome{Thread: "t", Status: harness.StatusDone, Seq: st.Head.Seq}, nil
		},
	})
	require.ErrorContains(t, err, "thread t: resume runs nothing at seq")
	require.ErrorContains(t, err, "though tool/execute/1-call_1 is enabled")
	require.Equal(t, 2, resumes)
	require.Equal(t, harness.StatusResumable, st.Status)
}

// A Resume hook's error is Drive's, as it is; a defect is not: it is
// recorded, and the thread is failed.
func TestDriveResumeErrors(t *testing.T) {
	e := harnesstest.New(t, harnesstest.ToolScript)
	_, err := e.RT.Start(ctx, e.Actor, "t", "Set the TTL")
	require.NoError(t, err)
	e.Approve("t", "1-call_1", true)
	boom := errors.New("boom")
	_, err = drive.Drive(ctx, e.Thread("t"), drive.Options{
		Resume: func(context.Context, *harness.Thread, drive.State) (harness.Outcome, error) {
			return harness.Outcome{}, boom
		},
	})
	require.Same(t, boom, err)

	d := harnesstest.New(t, harnesstest.ToolScript)
	d.RT.Services.Model = panicAt{m: d.Model, turn: 2}
	all, err := drive.NewApproval("all", nil, nil)
	require.NoError(t, err)
	_, err = d.RT.Start(ctx, d.Actor, "t", "Set the TTL")
	require.NoError(t, err)
	st, err := drive.Drive(ctx, d.Thread("t"), drive.Options{Approval: all, Retry: true})
	require.NoError(t, err)
	require.Equal(t, harness.StatusFailed, st.Status)
	require.Contains(t, st.Reason, "model bug")
	require.Empty(t, st.Retry, "a defect is not tried again")
	require.EqualValues(t, 1, d.Runs.Load())
}

// panicAt is a model with a bug that shows at one turn.
type panicAt struct {
	m    model.Model
	turn int
}

func (p panicAt) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	if req.Turn == p.turn {
		panic("model bug")
	}
	return p.m.Turn(ctx, req)
}

// Drive in a front end of one's own: the thread parks on a write, and
// Ask — here a person who approves everything — answers it; Drive goes
// on until the thread is done.
func ExampleDrive() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "harness-drive")
	defer os.RemoveAll(dir)
	store, err := thread.OpenPebble(dir)
	if err != nil {
		panic(err)
	}
	defer store.Close()

	script, _ := model.ParseScript("example", []byte(`
{"text": "I'll set the TTL.", "tool_calls": [{"id": "call_1", "name": "write_file", "args": "{\"path\":\"cache.toml\"}"}]}
{"text": "Done."}`))
	tools, _ := harness.NewToolbox(harness.Tool{
		Spec:  facts.ToolSchema{Name: "write_file", Description: "Write a file."},
		Needs: action.Write, // writes ask for confirmation by default
		Run: func(ctx context.Context, args json.RawMessage) (facts.Report, error) {
			return facts.Report{Status: facts.StatusSucceeded, Stdout: "wrote cache.toml"}, nil
		},
	})
	cfg, _ := harness.NewConfig(harness.WithModelName("scripted"))
	actor, _ := harness.CodingActor(cfg, tools)
	rt, _ := harness.NewRuntime(store, harness.Services{Model: script, Tools: tools}, cfg)
	if _, err := rt.Start(ctx, actor, "t1", "Set the cache TTL to 300"); err != nil {
		panic(err)
	}

	st, err := drive.Drive(ctx, rt.Thread(actor, "t1"), drive.Options{
		Ask: func(ctx context.Context, th *harness.Thread, waits []drive.Pending) (int, error) {
			for _, w := range waits {
				fmt.Println("asked:", w.Kind, w.RequestID, w.Tool)
				d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{
					RequestID: w.RequestID, Approved: true, By: "ana", Digest: w.Digest,
				})
				if err != nil {
					return 0, err
				}
				if _, err := drive.PostAnswer(ctx, th, d, drive.AnswerKey(d.Kind, w.RequestID)); err != nil {
					return 0, err
				}
			}
			return len(waits), nil
		},
	})
	fmt.Println(st.Status, st.Head.Seq, err)
	// Output:
	// asked: confirmation 1-call_1 write_file
	// done 9 <nil>
}

// A transition that fails and stays enabled — here a compaction whose
// summarizer keeps failing, which no budget bounds — ends Drive with the
// failure after one Resume; it does not resume it again and again.
func TestDriveStopsOnATransitionThatKeepsFailing(t *testing.T) {
	e := harnesstest.New(t, `{"text": "Hello.", "usage": {"input_tokens": 50, "output_tokens": 5}}
{"text": "Again."}`, func(c *harness.Config) { c.CompactAt = 1 })
	e.RT.Services.Summarize = func(context.Context, []facts.Message) (string, error) {
		return "", errors.New("summarizer quota exceeded")
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err := e.RT.Start(ctx, e.Actor, "t", "Hello")
	require.NoError(t, err)
	d, err := facts.NewDraft(facts.KindUserMessage, "", facts.UserMessage{Text: "And again"})
	require.NoError(t, err)
	_, err = e.RT.Post(ctx, e.Actor, "t", d, "again")
	require.NoError(t, err)

	st, err := drive.Drive(ctx, e.Thread("t"), drive.Options{})
	require.NoError(t, err, "Drive returns the failure as the state, before the deadline")
	require.Equal(t, harness.StatusFailed, st.Status)
	require.Contains(t, st.Reason, "compact")
	failed := 0
	for _, k := range e.Kinds("t") {
		if k == facts.KindTransitionFailed {
			failed++
		}
	}
	require.LessOrEqual(t, failed, 2, "one Resume's worth of failures, not a loop")
}

// interjecting is a store through which, when the next confirmation is
// about to be appended, another party answers first — as a person on
// another machine might, between Drive's look at the thread and its
// policy's answer.
type interjecting struct {
	*thread.PebbleStore
	once func()
}

func (s *interjecting) Append(ctx context.Context, id string, after uint64, drafts ...facts.Draft) (thread.Head, error) {
	if f := s.once; f != nil && drafts[0].Kind == facts.KindConfirmationAnswered {
		s.once = nil
		f()
	}
	return s.PebbleStore.Append(ctx, id, after, drafts...)
}

// A confirmation answered by someone else just before the policy answers
// it: Drive sees the thread moved and goes on, under the same key or
// another.
func TestDriveWhenSomeoneAnswersFirst(t *testing.T) {
	for _, key := range []string{"same", "other"} {
		t.Run(key+" key", func(t *testing.T) {
			e := harnesstest.New(t, harnesstest.ToolScript)
			out, err := e.RT.Start(ctx, e.Actor, "t", "Set the TTL")
			require.NoError(t, err)
			require.Equal(t, harness.StatusParked, out.Status)
			req := out.Waits[0].RequestID
			st, err := drive.Inspect(ctx, e.Thread("t"))
			require.NoError(t, err)

			store := &interjecting{PebbleStore: e.Store}
			rt, err := harness.NewRuntime(store, e.RT.Services, e.RT.Config)
			require.NoError(t, err)
			first := 0
			opts := drive.Options{
				Approval: drive.Approval{Mode: drive.ApproveAll},
				Resume: func(ctx context.Context, _ *harness.Thread, _ drive.State) (harness.Outcome, error) {
					return rt.Resume(ctx, e.Actor, "t")
				},
			}
			answer := func() {
				first++
				d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: req, Approved: true, By: "ana", Digest: st.Waits[0].Digest})
				require.NoError(t, err)
				k := drive.AnswerKey(d.Kind, req)
				if key == "other" {
					k = "ana-from-her-laptop"
				}
				_, err = e.RT.Post(ctx, e.Actor, "t", d, k)
				require.NoError(t, err)
			}
			store.once = answer
			got, err := drive.Drive(ctx, rt.Thread(e.Actor, "t"), opts)
			require.NoError(t, err)
			require.Equal(t, 1, first)
			require.Equal(t, harness.StatusDone, got.Status, "the thread was answered and went on")
			require.EqualValues(t, 1, e.Runs.Load())
		})
	}
}

// A message posted with no key is posted under the key of the same
// message at the thread's head (MessageKey): posted again at that point,
// it is appended once.
func TestPostMessage(t *testing.T) {
	e := harnesstest.New(t, harnesstest.ToolScript)
	_, err := e.RT.Start(ctx, e.Actor, "t", "Set the TTL")
	require.NoError(t, err)
	th := e.Thread("t")
	head, err := e.Store.Head(ctx, "t")
	require.NoError(t, err)
	p, err := drive.PostMessage(ctx, th, "Also the docs", "")
	require.NoError(t, err)
	require.False(t, p.Duplicate)
	again, err := drive.PostMessage(ctx, th, "Also the docs", drive.MessageKey(head.Seq, "Also the docs"))
	require.NoError(t, err)
	require.True(t, again.Duplicate)
	require.Equal(t, p.Seq, again.Seq)
	keyed, err := drive.PostMessage(ctx, th, "Also the docs", "docs-1")
	require.NoError(t, err)
	require.False(t, keyed.Duplicate)
}
