package drive_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/stock"
)

// An action is described whole, the same for every front end: one that
// never ran shows the diff it would make (and only it: preview is not
// asked of one that ran); one that ran shows the diffs of what it
// changed, from the contents kept; a call is found by its id or its
// action's, and a seq by any fact of its action.
func TestDescribeAction(t *testing.T) {
	e := harnesstest.NewStock(t, harnesstest.StockScript)
	th := e.Thread("t")
	_, err := th.Start(ctx, "go")
	require.NoError(t, err)
	r, err := th.Reading(ctx)
	require.NoError(t, err)
	write := r.Actions()[0]
	same, ok := drive.FindAction(r, write.ID)
	require.True(t, ok, "found by the action's id")
	require.Equal(t, write.ID, same.ID)
	call, _ := r.Call(write.Call)
	require.NotEmpty(t, call.Ref)
	same, ok = drive.FindAction(r, call.Ref)
	require.True(t, ok, "and by its call's request")
	require.Equal(t, write.ID, same.ID)
	_, ok = drive.FindAction(r, "nothing")
	require.False(t, ok)
	at, ok := drive.ActionAt(r, write.RequestedSeq)
	require.True(t, ok)
	require.Equal(t, write.ID, at.ID)

	var asked []string
	preview := func(root, tool, args string) string {
		asked = append(asked, root+" "+tool)
		return "+would write\n"
	}
	doc := drive.DescribeAction(ctx, "t", r, write, nil, e.Root, preview)
	require.Equal(t, "+would write\n", doc.Proposed, "never ran: what it would do")
	require.Equal(t, []string{e.Root + " write_file"}, asked)
	require.Equal(t, "w", doc.Call.ID)
	require.NotNil(t, doc.Confirmation)
	require.Nil(t, doc.Answer)
	require.Empty(t, doc.Diffs)
	require.Contains(t, doc.Args, "cache.toml")

	st := e.RunApproved("u")
	require.Equal(t, "done", string(st.Status))
	r, err = e.Thread("u").Reading(ctx)
	require.NoError(t, err)
	write = r.Actions()[0]
	asked = nil
	doc = drive.DescribeAction(ctx, "u", r, write, stock.BlobsOf(e.Store), e.Root, preview)
	require.Empty(t, asked, "a call that ran is not previewed")
	require.Empty(t, doc.Proposed)
	require.NotNil(t, doc.Answer)
	require.Len(t, doc.Diffs, 1)
	require.Equal(t, "cache.toml", doc.Diffs[0].Path)
	require.Contains(t, doc.Diffs[0].Diff, "+ttl_seconds = 300")
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	require.NotContains(t, string(b), `"Args"`, "the arguments are in the request already")
	require.Contains(t, string(b), `"change":"modified"`)
}
