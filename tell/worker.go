package tell

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/worker"
)

// WorkerEvent tells what a worker did as a line stamped at (a parked
// thread adds a line per wait: hint says how to answer it). The thread's
// id and every word from a log are escaped.
func WorkerEvent(w io.Writer, e worker.Event, at time.Time, paint Paint, hint func(id string, p drive.Pending) string) {
	stamp := at.Format("15:04:05")
	id := present.EscapeLine(e.Thread)
	switch e.Kind {
	case worker.EventTook:
		fmt.Fprintf(w, "%s %s taken\n", stamp, id)
	case worker.EventInDoubt:
		fmt.Fprintf(w, "%s %s %s %s: its holder died while it ran; recorded as interrupted, not run again; the thread parks on reconcile\n",
			stamp, id, paint.on("yellow", "in doubt:"), present.EscapeLine(strings.Join(e.State.InDoubt, ", ")))
	case worker.EventStopped:
		st := e.State
		switch st.Status {
		case harness.StatusDone:
			fmt.Fprintf(w, "%s %s %s (seq %d)\n", stamp, id, paint.on("green", "done"), st.Head.Seq)
		case harness.StatusParked:
			var waits []string
			for _, p := range st.Waits {
				waits = append(waits, string(p.Kind)+" "+p.RequestID)
			}
			fmt.Fprintf(w, "%s %s %s for %s (seq %d)\n", stamp, id, paint.on("yellow", "parked"), present.EscapeLine(strings.Join(waits, ", ")), st.Head.Seq)
			for _, p := range st.Waits {
				fmt.Fprintf(w, "    %s\n", present.EscapeLine(hint(st.Thread, p)))
			}
		default:
			fmt.Fprintf(w, "%s %s %s (seq %d): %s\n", stamp, id, paint.on("red", string(st.Status)), st.Head.Seq, OneLine(st.Reason))
		}
	case worker.EventPutOff:
		fmt.Fprintf(w, "%s %s put off: another holds it; again in %v\n", stamp, id, e.Later)
	case worker.EventError:
		what := id
		if what == "" {
			what = "worker"
		}
		fmt.Fprintf(w, "%s %s %s %s; again in %v\n", stamp, what, paint.on("red", "error:"), OneLine(e.Err.Error()), e.Later.Round(time.Millisecond))
	case worker.EventElsewhere:
		fmt.Fprintf(w, "%s %s put off: %s; again in %v\n", stamp, id, OneLine(e.Err.Error()), e.Later)
	case worker.EventHandedOver:
		fmt.Fprintf(w, "%s %s handed over: this worker stops\n", stamp, id)
	}
}
