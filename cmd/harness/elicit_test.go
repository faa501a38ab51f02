package main

import (
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/require"
)

// cmdRetry runs a command until it succeeds, for at most 30 s: retry
// command [args...]. Its last stdout and stderr are kept.
func cmdRetry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: retry command [args...]")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := ts.Exec(args[0], args[1:]...)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not succeed within 30s: %v", args[0], err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// An answer's secret comes from stdin when asked (NAME=- or --content
// -), once, bounded.
func TestElicitReplyFromStdin(t *testing.T) {
	r, err := elicitReply("1-a-e1", "accept", "", []string{"name=Ana", "password=-"}, strings.NewReader("hunter2\n"))
	require.NoError(t, err)
	require.Equal(t, map[string]string{"name": "Ana", "password": "hunter2"}, r.Fields)

	r, err = elicitReply("1-a-e1", "accept", "-", nil, strings.NewReader(`{"password":"hunter2"}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"password":"hunter2"}`, string(r.Content))

	_, err = elicitReply("1-a-e1", "accept", "", []string{"a=-", "b=-"}, strings.NewReader("x\n"))
	require.ErrorContains(t, err, "one value only")
	_, err = elicitReply("1-a-e1", "accept", "", []string{"a=-"}, strings.NewReader(strings.Repeat("x", maxStdinAnswer+1)))
	require.ErrorContains(t, err, "over")
}
