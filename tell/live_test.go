package tell_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/tell"
)

// syncBuilder is a strings.Builder safe for the drawing goroutine.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A running command's output is drawn under a spinner, its last
// LiveLines lines, escaped; Stop erases what was drawn. A Live that is
// off (not a terminal) draws nothing.
func TestLiveDrawsTheTailEscaped(t *testing.T) {
	var w syncBuilder
	l := tell.NewLive(&w, true)
	require.True(t, l.On())
	l.Start("running 1-a")
	for i := range 8 {
		l.Output("stdout", []byte("line "+string(rune('0'+i))+"\x1b[2J\n"))
	}
	require.Eventually(t, func() bool { return strings.Contains(w.String(), "running 1-a · ") }, 30*time.Second, 20*time.Millisecond)
	l.Stop()
	out := w.String()
	require.NotContains(t, out, "\x1b[2J")
	require.Contains(t, out, `│ line 7\x1b[2J`)
	require.NotContains(t, out, "│ line 2", "only the last five lines")
	require.True(t, strings.HasSuffix(out, "\x1b[J"), "erased at the end: %q", out)

	var off strings.Builder
	o := tell.NewLive(&off, false)
	o.Start("x")
	o.Output("stdout", []byte("y\n"))
	o.Asked(drive.Event{})
	o.Hold()()
	o.Stop()
	var nl *tell.Live
	nl.Stop()
	require.False(t, nl.On())
	require.Empty(t, off.String())
}

// A model turn's streamed text is shown escaped, and a stream that
// stopped says that its text is not kept.
func TestTurnShowStreamsEscaped(t *testing.T) {
	var w syncBuilder
	ts := &tell.TurnShow{W: &w}
	ts.Event(drive.Event{Kind: drive.EventTurnStarted, Turn: 1})
	ts.Event(drive.Event{Kind: drive.EventText, Text: "hi \x1b]0;x\x07there"})
	ts.Event(drive.Event{Kind: drive.EventTurnEnded, Error: "reset"})
	out := w.String()
	require.NotContains(t, out, "\x1b]")
	require.Contains(t, out, "hi ")
	require.Contains(t, out, "(the stream stopped: the text above is not kept)")
}

// A form's field is labelled with its type, its choices and whether it
// is required; the server's name and title are escaped.
func TestFieldLabel(t *testing.T) {
	require.Equal(t, `name\x1b[2J (\x07Name) [string, required]`,
		tell.FieldLabel(drive.ElicitField{Name: "name\x1b[2J", Title: "\x07Name", Type: "string", Required: true}))
	require.Equal(t, "ok [boolean, yes or no, optional: Enter leaves it out]",
		tell.FieldLabel(drive.ElicitField{Name: "ok", Type: "boolean"}))
	require.Equal(t, "color [string, one of 2 (a number or the value), optional: Enter leaves it out]",
		tell.FieldLabel(drive.ElicitField{Name: "color", Type: "string", Enum: []string{"red", "blue"}}))
}
