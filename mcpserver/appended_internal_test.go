package mcpserver

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/thread"
)

// heldWorkspace is a workspace whose store cannot be peeked while a
// request holds it (as a directory store held by this process): only
// what the server itself appends tells a subscriber.
type heldWorkspace struct {
	env *harnesstest.Env
	// closed counts the openings closed.
	closed *atomic.Int32
}

func (w heldWorkspace) Open(context.Context, OpenRequest) (*Opened, error) {
	return &Opened{Runtime: w.env.RT, Actor: w.env.Actor, Close: func() error { w.closed.Add(1); return nil }}, nil
}

func (w heldWorkspace) Peek(context.Context) (drive.Peek, func(), error) {
	return func(context.Context, func(thread.Store) error) error { return errors.New("held") }, func() {}, nil
}

// TestSubscribedDuringARequest: a client that subscribes to a thread
// after a request of the server opened the workspace (a run under way,
// with no subscription when it began) is told of what that request
// appends after.
func TestSubscribedDuringARequest(t *testing.T) {
	env := harnesstest.New(t, harnesstest.ToolScript)
	ctx := context.Background()
	_, err := env.Thread("t1").Start(ctx, "a task")
	require.NoError(t, err)
	ws := heldWorkspace{env: env, closed: &atomic.Int32{}}
	srv, s := newServer(ws, ServerOptions{})
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverEnd, nil)
	require.NoError(t, err)
	updated := make(chan string, 10)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	}).Connect(ctx, clientEnd, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close(); ss.Wait() })

	// The server the session serves: its request opens the workspace
	// with nobody subscribed (as the stop tool does, with no session
	// to log to).
	o, err := s.open(ctx, OpenRequest{}, nil)
	require.NoError(t, err)
	defer o.Close()

	require.NoError(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: ThreadURI("t1")}))
	// The subscription's own opening, then the watch's first look
	// (through Open) are over: later looks see nothing (held).
	require.Eventually(t, func() bool { return ws.closed.Load() == 2 }, 30*time.Second, 5*time.Millisecond)
	_, err = drive.Stop(ctx, o.Runtime.Thread(o.Actor, "t1"), "bob", "enough")
	require.NoError(t, err)
	select {
	case u := <-updated:
		require.Equal(t, ThreadURI("t1"), u)
	case <-time.After(30 * time.Second):
		t.Fatal("a subscription made during the request was not told of its append")
	}
}
