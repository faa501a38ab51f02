package drive_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
)

// Lines written from many goroutines at once come out whole, each one
// JSON; the result line ends the stream.
func TestLineWriterWritesWholeLines(t *testing.T) {
	var b bytes.Buffer
	l := &drive.LineWriter{W: &b}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				l.Progress(drive.Event{Kind: drive.EventText, Text: strings.Repeat("x", 300) + "\n\x1b"})
			}
		})
	}
	d, err := facts.NewDraft(facts.KindUserMessage, "ingress/k", facts.UserMessage{Text: "hi"})
	require.NoError(t, err)
	var ferr error
	wg.Go(func() {
		ferr = l.Fact(facts.Fact{Thread: "t1", Seq: 1, Kind: d.Kind, Cause: d.Cause, Data: d.Data, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	})
	wg.Wait()
	require.NoError(t, ferr)
	require.False(t, l.Ended())
	require.NoError(t, l.Result(drive.Result{Status: "done"}))
	require.True(t, l.Ended())
	sc := bufio.NewScanner(&b)
	sc.Buffer(nil, 1<<20)
	n := 0
	var last drive.Line
	for sc.Scan() {
		require.NoError(t, json.Unmarshal(sc.Bytes(), &last), sc.Text())
		n++
	}
	require.Equal(t, 8*50+2, n)
	require.Equal(t, drive.LineResult, last.Type)
}
