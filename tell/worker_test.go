package tell_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/tell"
	"github.com/seed-7cc7a084/harness/worker"
)

func TestWorkerEventLines(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	hint := func(id string, p drive.Pending) string { return "answer " + id + " " + p.RequestID + "\x1b" }
	parked := drive.State{Thread: "t\x1b1", Status: harness.StatusParked, Waits: []drive.Pending{{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-c"}}}}
	parked.Head.Seq = 4
	for _, tc := range []struct {
		e    worker.Event
		want string
	}{
		{worker.Event{Kind: worker.EventTook, Thread: "t1"}, "03:04:05 t1 taken\n"},
		{worker.Event{Kind: worker.EventStopped, Thread: "t\x1b1", State: parked},
			"03:04:05 t\\x1b1 [yellow:parked] for confirmation 1-c (seq 4)\n    answer t\\x1b1 1-c\\x1b\n"},
		{worker.Event{Kind: worker.EventStopped, Thread: "t2", State: drive.State{Thread: "t2", Status: harness.StatusFailed, Reason: "model\nsaid no"}},
			"03:04:05 t2 [red:failed] (seq 0): model said no\n"},
		{worker.Event{Kind: worker.EventInDoubt, Thread: "t3", State: drive.State{InDoubt: []string{"1-a", "2-b"}}},
			"03:04:05 t3 [yellow:in doubt:] 1-a, 2-b: its holder died while it ran; recorded as interrupted, not run again; the thread parks on reconcile\n"},
		{worker.Event{Kind: worker.EventError, Err: errors.New("no\nresponders"), Later: 1500 * time.Microsecond},
			"03:04:05 worker [red:error:] no responders; again in 2ms\n"},
		{worker.Event{Kind: worker.EventPutOff, Thread: "t4", Later: time.Second}, "03:04:05 t4 put off: another holds it; again in 1s\n"},
		{worker.Event{Kind: worker.EventElsewhere, Thread: "t4", Err: errors.New("thread t4 works in /a\x1b[2J, not /b"), Later: 30 * time.Second}, "03:04:05 t4 put off: thread t4 works in /a\\x1b[2J, not /b; again in 30s\n"},
		{worker.Event{Kind: worker.EventHandedOver, Thread: "t5"}, "03:04:05 t5 handed over: this worker stops\n"},
	} {
		var b bytes.Buffer
		tell.WorkerEvent(&b, tc.e, at, brackets, hint)
		require.Equal(t, tc.want, b.String())
	}
}
