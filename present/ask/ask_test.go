package ask

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPromptDropsALateKey: input typed before a question was put (a key
// typed late for one that was answered elsewhere meanwhile) does not
// answer it; input typed after does, and an Enter after a key is the
// key's.
func TestPromptDropsALateKey(t *testing.T) {
	chunks := make(chan chunk, 3)
	var out bytes.Buffer
	p := &Prompter{out: &out, chunks: chunks, fd: -1}
	chunks <- chunk{data: []byte("n\n"), at: time.Now().Add(-time.Second)}
	chunks <- chunk{data: []byte("y\n"), at: time.Now().Add(time.Hour)} // after the question is put
	got, err := p.Key(context.Background(), "Approve? ")
	require.NoError(t, err)
	require.Equal(t, "y", got, "the late n answers nothing")
	p.pending = append(p.pending, typed{'\r', time.Now().Add(time.Hour)}, typed{'o', time.Now().Add(time.Hour)}, typed{'k', time.Now().Add(time.Hour)}, typed{'\r', time.Now().Add(time.Hour)})
	p.swallow = time.Now().Add(2 * time.Hour) // the Enter below is read with the key
	got, err = p.Line(context.Background(), "Reason: ")
	require.NoError(t, err)
	require.Equal(t, "ok", got, "the Enter after the key is the key's")
}

// Off a terminal a key is read as a line; the input's end before an
// answer is ErrNoAnswer, and a line over MaxLine is refused. What is
// asked is written as it is: the caller escapes what it quotes.
func TestPromptLinesAndTheEnd(t *testing.T) {
	var out bytes.Buffer
	p := New(strings.NewReader("  yes  \n"), &out)
	got, err := p.Key(context.Background(), "Approve? ")
	require.NoError(t, err)
	require.Equal(t, "yes", got)
	_, err = p.Line(context.Background(), "More? ")
	require.True(t, errors.Is(err, ErrNoAnswer), "%v", err)
	require.Equal(t, "Approve? More? \n", out.String())

	p = New(strings.NewReader(strings.Repeat("x", MaxLine+1)+"\n"), &out)
	_, err = p.Line(context.Background(), "Long? ")
	require.ErrorContains(t, err, "longer than")

	hidden, err := New(strings.NewReader("s3cret\n"), &out).Hidden(context.Background(), func(hidden bool) string {
		require.False(t, hidden, "not a terminal: nothing can be hidden, and the question says so")
		return "Secret: "
	})
	require.NoError(t, err)
	require.Equal(t, "s3cret", hidden)
}

// An interrupt (the context done) ends a wait for an answer.
func TestPromptInterrupted(t *testing.T) {
	chunks := make(chan chunk)
	p := &Prompter{out: &bytes.Buffer{}, chunks: chunks, fd: -1}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := p.Line(ctx, "Wait: ")
	require.ErrorIs(t, err, context.DeadlineExceeded)
}
