package tell_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
	"github.com/seed-7cc7a084/harness/thread"
)

func asking(t *testing.T) (*harnesstest.LockedBuffer, func(after, line string), <-chan drive.State, *stock.Session) {
	t.Helper()
	s, m, getenv := scriptedSession(t, `{"text": "writing", "tool_calls": [{"id": "c1", "name": "write_file", "args": "{\"path\":\"a\\u001b[2J.txt\",\"content\":\"hi\\n\"}"}]}
{"text": "Done."}
`)
	ctx := t.Context()
	d, err := s.NewDriver(s.Approval, stock.DriverOptions{Model: m})
	require.NoError(t, err)
	th, _, err := d.Start(ctx, "t1", facts.UserMessage{Text: "write"}, "ana", false, nil)
	require.NoError(t, err)

	term := new(harnesstest.LockedBuffer) // what the Asker writes, read while it writes
	in, keys := io.Pipe()
	t.Cleanup(func() { keys.Close() })
	a := &tell.Asker{Teller: tell.Teller{W: term}, In: in, Driver: d, Session: s, Getenv: getenv, By: "ana",
		Interrupted: func(id string) error { return context.Canceled }}
	o := d.Options()
	o.Ask = a.Ask
	end := make(chan drive.State, 1)
	go func() {
		st, err := d.Finish(ctx, th, o, nil)
		if err != nil {
			st.Reason = err.Error()
		}
		end <- st
	}()
	seen := 0
	typeAfter := func(after, line string) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Contains(term.String()[seen:], after) }, 20*time.Second, 5*time.Millisecond, "waiting for %q in:\n%s", after, term.String())
		seen = strings.LastIndex(term.String(), after) + len(after)
		time.Sleep(20 * time.Millisecond) // typed after the question was put
		_, err := io.WriteString(keys, line+"\n")
		require.NoError(t, err)
	}
	return term, typeAfter, end, s
}

// A person's word that is no key is asked again, as a line, and "y"
// approves: the call runs and the thread ends. The model's path is shown
// escaped.
func TestAskerApproves(t *testing.T) {
	term, typeAfter, end, s := asking(t)
	typeAfter("[s]kip: ", "perhaps")
	typeAfter("is not an answer", "y")
	st := <-end
	require.Equal(t, harness.StatusDone, st.Status, "%+v\n%s", st, term.String())
	require.NotContains(t, term.String(), "\x1b[2J", "the model's words are escaped")
	require.Contains(t, term.String(), `"perhaps" is not an answer: type y, a, p, n, d or s`)
	b, err := os.ReadFile(filepath.Join(s.Place.Root, "a\x1b[2J.txt"))
	require.NoError(t, err)
	require.Equal(t, "hi\n", string(b))
	head, err := s.Store.Head(t.Context(), "t1")
	require.NoError(t, err)
	answers := 0
	for seq := uint64(1); seq <= head.Seq; seq++ {
		f, err := thread.ReadAt(t.Context(), s.Store, "t1", seq)
		require.NoError(t, err)
		require.NotEqual(t, facts.KindPolicySet, f.Kind, "y approves this call only: no rule")
		if f.Kind == facts.KindConfirmationAnswered {
			answers++
			a, err := facts.Decode[facts.ConfirmationAnswered](f)
			require.NoError(t, err)
			require.True(t, a.Approved)
			require.Equal(t, "ana", a.By)
		}
	}
	require.Equal(t, 1, answers)
}

// "d" denies and stops with the reason typed; nothing is written.
func TestAskerDeniesAndStops(t *testing.T) {
	term, typeAfter, end, s := asking(t)
	typeAfter("[s]kip: ", "d")
	typeAfter("Reason", "not that file")
	st := <-end
	require.Equal(t, harness.StatusStopped, st.Status, "%+v\n%s", st, term.String())
	_, err := os.Stat(filepath.Join(s.Place.Root, "a\x1b[2J.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// "s" skips: the thread stays parked on the request.
func TestAskerSkips(t *testing.T) {
	term, typeAfter, end, _ := asking(t)
	typeAfter("[s]kip: ", "s")
	st := <-end
	require.Equal(t, harness.StatusParked, st.Status, "%+v\n%s", st, term.String())
}
