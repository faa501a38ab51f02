package tell

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/seal"
)

// Seals tells what the seals of a thread say of its log (err is the
// check's failure, if it failed) and reports whether they hold: a broken
// seal, a broken witness log or a named key that sealed nothing do not.
// A seal by a key not named is noted, with nameKey saying how to name
// one; a log with no seal is said to be unsealed, which holds.
func Seals(w io.Writer, r seal.Report, err error, nameKey string, paint Paint) bool {
	for _, v := range r.Seals {
		if v.Status == seal.StatusUnknownKey {
			fmt.Fprintf(w, "%s the seal at seq %d (%s, %s line %d) is by %s, a key not named (%s): not checked\n",
				paint.on("yellow", "note:"), v.Seq, v.At.Local().Format(time.DateTime), present.EscapeLine(v.Witness), v.Line, present.EscapeLine(string(v.Key)), nameKey)
		}
	}
	for _, u := range r.Unread {
		fmt.Fprintf(w, "%s %s\n", paint.on("yellow", "note:"), present.EscapeLine(u))
	}
	if r.Elsewhere > 0 {
		were := "were"
		if r.Elsewhere == 1 {
			were = "was"
		}
		fmt.Fprintf(w, "%s %s of a thread %s in another store (another first fact) %s not checked\n", paint.on("dim", "note:"), present.Plural(r.Elsewhere, "seal", "seals"), r.Thread, were)
	}
	if err != nil {
		var be *seal.BrokenError
		if errors.As(err, &be) {
			fmt.Fprintf(w, "%s thread %s: the seal at seq %d (sealed %s by %s, %s line %d): %s\n", paint.on("red", "verification failed:"),
				be.Thread, be.Seq, be.At.Local().Format(time.DateTime), present.EscapeLine(string(be.Key)), present.EscapeLine(be.Witness), be.Line, OneLine(be.Reason))
		} else {
			fmt.Fprintf(w, "%s %s\n", paint.on("red", "verification failed:"), OneLine(err.Error()))
		}
		return false
	}
	latest, ok := r.Latest()
	if !ok {
		fmt.Fprintf(w, "%s thread %s: no seal of its log in the witness logs read; the hash chain alone catches an edit, not a rewrite or a cut tail\n", paint.on("yellow", "unsealed:"), r.Thread)
		return true
	}
	n := 0
	for _, v := range r.Seals {
		if v.Status == seal.StatusHolds {
			n++
		}
	}
	holds := fmt.Sprintf("%d of its seals hold", n)
	if n == 1 {
		holds = "1 of its seals holds"
		if len(r.Seals) == 1 {
			holds = "its seal holds"
		}
	}
	fmt.Fprintf(w, "%s %s; the latest at seq %d of %d (%s by %s)\n", paint.on("green", "sealed:"), holds, latest.Seq, r.Head,
		latest.At.Local().Format(time.DateTime), present.EscapeLine(string(latest.Key)))
	return true
}
