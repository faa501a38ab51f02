package search_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/search"
	"github.com/seed-7cc7a084/harness/thread"
)

// Find who approved a write, in a store of one thread: the index is
// brought up to date, then searched; the hit is read back from the log.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "search-example-")
	defer os.RemoveAll(dir)
	store, _ := thread.OpenPebble(filepath.Join(dir, "db"))
	defer store.Close()
	d := func(kind facts.Kind, cause string, payload any) facts.Draft {
		dr, _ := facts.NewDraft(kind, cause, payload)
		return dr
	}
	store.Append(ctx, "t1", 0,
		d(facts.KindActionRequested, "tool/request/a1", facts.ActionRequested{ActionID: "a1", Adapter: "write_file", Payload: facts.RawJSON(`{"path":"go.mod"}`)}),
		d(facts.KindConfirmationRequested, "confirm/a1", facts.ConfirmationRequested{RequestID: "a1", CallID: "a1", Tool: "write_file"}),
		d(facts.KindConfirmationAnswered, "ingress/answer-a1", facts.ConfirmationAnswered{RequestID: "a1", Approved: true, By: "ana"}),
		d(facts.KindActionCompleted, "tool/execute/a1", facts.ActionCompleted{ActionID: "a1", Report: facts.Report{Status: facts.StatusSucceeded}, EffectState: facts.EffectObserved}),
	)

	ix, err := search.Open(ctx, filepath.Join(dir, "search"), 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ix.Close()
	st, _ := ix.Update(ctx, store)
	fmt.Printf("indexed %d facts\n", st.Facts)

	q, _ := search.Parse("by:ana path:go.mod kind:action.completed", time.Now())
	page, _ := ix.Search(ctx, store, q, search.Options{})
	for _, h := range page.Hits {
		fmt.Println(h.Fact.Thread, h.Fact.Seq, h.Fact.Kind)
	}

	_, err = search.Parse("colour:red", time.Now())
	fmt.Println(err)
	// Output:
	// indexed 4 facts
	// t1 4 action.completed
	// bad query: term 1 "colour:red": no field "colour" (fields: kind, tool, path, by, status, effect, check, model, thread, since, until; quote a word with a colon: "colour:red")
}
