package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/mcpserver"
)

// connect connects a go-sdk client to a server on ws over an in-memory
// connection; updated receives the URIs of notifications/resources/updated.
func connect(t *testing.T, ws mcpserver.Workspace) (cs *sdk.ClientSession, updated chan string, closeAll func()) {
	t.Helper()
	ctx := context.Background()
	srv := mcpserver.NewServer(ws, mcpserver.ServerOptions{})
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverEnd, nil)
	require.NoError(t, err)
	updated = make(chan string, 100)
	cs, err = sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		}}).Connect(ctx, clientEnd, nil)
	require.NoError(t, err)
	closeAll = func() { cs.Close(); ss.Wait() }
	t.Cleanup(closeAll)
	return cs, updated, closeAll
}

func readText(t *testing.T, cs *sdk.ClientSession, uri string) string {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
	require.NoError(t, err, uri)
	require.Len(t, res.Contents, 1)
	require.Equal(t, uri, res.Contents[0].URI)
	require.Equal(t, "application/json", res.Contents[0].MIMEType)
	return res.Contents[0].Text
}

// TestThreadResources: the server declares resources (with subscribe)
// and prompts as it serves them; a thread's state resource is the state
// document (drive.State) the view tool gives; the facts resource pages;
// the threads are listed, paged by the cursor; what is not a thread of
// this workspace is resource-not-found, saying why.
func TestThreadResources(t *testing.T) {
	env := harnesstest.New(t, harnesstest.ToolScript)
	ws := workspace{env: env}
	v := start(t, ws, "t1")
	cs, _, _ := connect(t, ws)
	ctx := context.Background()

	caps := cs.InitializeResult().Capabilities
	require.NotNil(t, caps.Resources)
	require.True(t, caps.Resources.Subscribe)
	require.False(t, caps.Resources.ListChanged, "no list_changed is sent")
	require.NotNil(t, caps.Prompts)
	require.False(t, caps.Prompts.ListChanged)
	require.Nil(t, caps.Completions)

	var templates []string
	for tm, err := range cs.ResourceTemplates(ctx, nil) {
		require.NoError(t, err)
		templates = append(templates, tm.URITemplate)
	}
	require.ElementsMatch(t, []string{mcpserver.ThreadTemplate, mcpserver.FactsTemplate}, templates)

	var st drive.State
	require.NoError(t, json.Unmarshal([]byte(readText(t, cs, "harness://threads/t1")), &st))
	require.Equal(t, v.State.Thread, st.Thread)
	require.Equal(t, v.State.Status, st.Status)
	require.Equal(t, v.State.Head, st.Head)
	require.Len(t, st.Waits, 1)
	require.Equal(t, v.Waits[0].Digest, st.Waits[0].Digest)

	var page mcpserver.FactsPageView
	require.NoError(t, json.Unmarshal([]byte(readText(t, cs, "harness://threads/t1/facts?limit=2")), &page))
	require.Len(t, page.Facts, 2)
	require.EqualValues(t, 1, page.Facts[0].Seq)
	require.Equal(t, "harness://threads/t1/facts?after=2&limit=2", page.Next)
	var all []facts.Fact
	for uri := "harness://threads/t1/facts?limit=2"; uri != ""; {
		var p mcpserver.FactsPageView
		require.NoError(t, json.Unmarshal([]byte(readText(t, cs, uri)), &p))
		all = append(all, p.Facts...)
		uri = p.Next
	}
	require.Equal(t, env.Log("t1"), all)

	// Unknown threads and URIs that are not this server's.
	for _, uri := range []string{
		"harness://threads/nope", "harness://threads/nope/facts",
		"harness://threads/../etc/passwd", "harness://threads/t1/../t1", "harness://threads/%2e%2e",
		"harness://threads/t1/facts/x", "harness://threads/t1?x=1", "harness://other/t1",
		"harness://threads/", "file:///etc/passwd", "harness://u@threads/t1",
	} {
		_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		var je *jsonrpc.Error
		require.True(t, errors.As(err, &je), "%s: %v", uri, err)
		require.EqualValues(t, sdk.CodeResourceNotFound, je.Code, uri)
		require.Contains(t, je.Message, "Resource not found", uri)
		require.JSONEq(t, fmt.Sprintf(`{"uri":%q}`, uri), string(je.Data))
	}
	_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "harness://threads/nope"})
	require.ErrorContains(t, err, `no thread "nope"`)
	for _, uri := range []string{"harness://threads/t1/facts?limit=0", "harness://threads/t1/facts?after=-1", "harness://threads/t1/facts?evil=1"} {
		_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		require.Error(t, err, uri)
	}

	// The list: every thread, a page at a time.
	for i := range 150 {
		_, err := env.Thread(fmt.Sprintf("x%03d", i)).Start(ctx, "list me")
		require.NoError(t, err)
	}
	res, err := cs.ListResources(ctx, nil)
	require.NoError(t, err)
	require.Len(t, res.Resources, mcpserver.ThreadsPage)
	require.NotEmpty(t, res.NextCursor)
	require.Equal(t, "harness://threads/t1", res.Resources[0].URI)
	var names []string
	for r, err := range cs.Resources(ctx, nil) {
		require.NoError(t, err)
		names = append(names, r.Name)
	}
	require.Len(t, names, 151)
	_, err = cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: "not a cursor!"})
	require.ErrorContains(t, err, "not a cursor this server gave")
}

// TestHugeThreadIsBounded: a page of the facts resource holds at most
// FactsPage facts and about FactsBytes of JSON, and names the next page.
func TestHugeThreadIsBounded(t *testing.T) {
	env := harnesstest.New(t, harnesstest.ToolScript)
	ctx := context.Background()
	big := strings.Repeat("x", 8<<10)
	var after uint64
	for range 30 {
		var ds []facts.Draft
		for range 100 {
			d, err := facts.NewDraft(facts.KindUserMessage, facts.IngressCause(fmt.Sprint(after)), facts.UserMessage{Text: big})
			require.NoError(t, err)
			ds = append(ds, d)
		}
		h, err := env.Store.Append(ctx, "huge", after, ds...)
		require.NoError(t, err)
		after = h.Seq
	}
	cs, _, _ := connect(t, workspace{env: env})
	text := readText(t, cs, "harness://threads/huge/facts")
	require.LessOrEqual(t, len(text), mcpserver.FactsBytes+64<<10)
	var p mcpserver.FactsPageView
	require.NoError(t, json.Unmarshal([]byte(text), &p))
	require.Less(t, len(p.Facts), mcpserver.FactsPage)
	require.Equal(t, mcpserver.FactsURI("huge", p.Facts[len(p.Facts)-1].Seq), p.Next)

	// Small facts: FactsPage at most.
	var ds []facts.Draft
	for i := range 1200 {
		d, err := facts.NewDraft(facts.KindUserMessage, facts.IngressCause(fmt.Sprint(i)), facts.UserMessage{Text: "hi"})
		require.NoError(t, err)
		ds = append(ds, d)
	}
	_, err := env.Store.Append(ctx, "many", 0, ds...)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(readText(t, cs, "harness://threads/many/facts?limit=100000")), &p))
	require.Len(t, p.Facts, mcpserver.FactsPage)
	require.Equal(t, fmt.Sprintf("harness://threads/many/facts?after=%d", mcpserver.FactsPage), p.Next)
}

// watching reports whether a subscription watch runs.
func watching() bool {
	return strings.Contains(stacks(), "mcpserver.(*watcher).watch")
}

// stacks are every goroutine's stack, whole.
func stacks() string {
	for n := 1 << 20; ; n *= 2 {
		buf := make([]byte, n)
		if m := runtime.Stack(buf, true); m < n {
			return string(buf[:m])
		}
	}
}

// TestSubscribeToAThread: a subscription to a thread is told of each
// fact appended to it by anyone (here straight to the store, as another
// process would), its facts resource too; an unsubscribed one, or a
// closed session, is not, and the watch ends with the last one.
func TestSubscribeToAThread(t *testing.T) {
	env := harnesstest.New(t, harnesstest.ToolScript)
	ws := workspace{env: env}
	start(t, ws, "t1")
	_, err := env.Thread("t2").Start(context.Background(), "other")
	require.NoError(t, err)
	before := goleak.IgnoreCurrent()
	cs, updated, closeAll := connect(t, ws)
	ctx := context.Background()

	err = cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "harness://threads/nope"})
	require.ErrorContains(t, err, `no thread "nope"`)
	require.NoError(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "harness://threads/t1"}))
	require.NoError(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "harness://threads/t1/facts"}))

	// Nothing appended: nothing told.
	select {
	case u := <-updated:
		t.Fatalf("told of %s with nothing appended", u)
	case <-time.After(600 * time.Millisecond):
	}
	// Another thread's facts: nothing told.
	_, err = drive.Stop(ctx, env.Thread("t2"), "bob", "not this one")
	require.NoError(t, err)
	select {
	case u := <-updated:
		t.Fatalf("told of %s for t2", u)
	case <-time.After(600 * time.Millisecond):
	}

	_, err = drive.Stop(ctx, env.Thread("t1"), "bob", "enough")
	require.NoError(t, err)
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case u := <-updated:
			got[u] = true
		case <-time.After(30 * time.Second):
			t.Fatalf("not told of the stop: %v", got)
		}
	}
	require.Equal(t, map[string]bool{"harness://threads/t1": true, "harness://threads/t1/facts": true}, got)

	require.NoError(t, cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: "harness://threads/t1"}))
	require.NoError(t, cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: "harness://threads/t1/facts"}))
	// The watch ended with the last subscription.
	require.Eventually(t, func() bool { return !watching() }, 30*time.Second, 50*time.Millisecond, "the watch ends with the last subscription")
	_, err = env.Post("t1", facts.KindUserMessage, facts.UserMessage{Text: "more"}, "k-more")
	if err == nil {
		select {
		case u := <-updated:
			t.Fatalf("told of %s after unsubscribing", u)
		case <-time.After(600 * time.Millisecond):
		}
	}

	// A session that ends ends its subscriptions, and the watch.
	require.NoError(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "harness://threads/t1"}))
	require.Eventually(t, watching, 30*time.Second, 10*time.Millisecond, "a subscription is watched")
	closeAll()
	require.NoError(t, goleak.Find(before), "the watch ends with the session")
}
