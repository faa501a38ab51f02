package mcp_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcp"
)

// floodAsks is how many questions the flooding server sends at once.
const floodAsks = 200

// A hostile server sends its questions all at once during its call (the
// client handles a server's requests concurrently): one waits for a
// person, the others are refused at once, so the log holds one question,
// not one per request nobody answered. The call goes on once the person
// answers, and the log verifies.
func TestElicitationFloodAsksOneAtATime(t *testing.T) {
	ctx := context.Background()
	var refused atomic.Int64
	srv := sdk.NewServer(&sdk.Implementation{Name: "flood", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "flood", Description: "Ask many times at once."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ noArgs) (*sdk.CallToolResult, any, error) {
			// Bounded, so that a harness that lets every question wait
			// fails this test rather than hangs it.
			ctx, cancel := context.WithTimeout(ctx, 25*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			for i := range floodAsks {
				wg.Go(func() {
					_, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: fmt.Sprintf("question %d", i),
						RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}}}})
					if err != nil {
						refused.Add(1)
					}
				})
			}
			wg.Wait()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("refused %d", refused.Load())}}}, nil, nil
		})
	hs := httptestServer(t, srv, func(*http.Request) {})
	root := t.TempDir()
	e := newEnv(t, root, mcp.Servers{"f": {URL: hs.URL}}, call("mcp__f__flood", `{}`))
	_, err := e.thread("t1").Start(ctx, "Use the tools.")
	require.NoError(t, err)
	done := make(chan drive.State, 1)
	go func() { done <- drive1(e, "t1") }()
	p := elicitWait(t, e, "t1", done)

	// Every other request is refused before the person answers.
	deadline := time.Now().Add(20 * time.Second)
	for refused.Load() < floodAsks-1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	require.EqualValues(t, floodAsks-1, refused.Load(), "the questions past the one waiting are refused")
	require.Len(t, all[facts.QuestionAsked](e, "t1", facts.KindQuestionAsked), 1, "one question in the log")

	_, err = drive.AnswerPending(ctx, e.thread("t1"), p, drive.Reply{Kind: fold.WaitQuestion, Elicit: facts.ElicitDecline, By: "ana"})
	require.NoError(t, err)
	var st drive.State
	select {
	case st = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not go on after the answer")
	}
	require.Equal(t, harness.StatusDone, st.Status, st.Reason)
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.st.Actor, "t1"))
}
