package tell

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/thread"
)

// Given says that what a post would append is in the thread id's log
// already, at seq: "already answered: 1-call_1 approved by ana (seq 6);
// nothing appended".
func Given(ctx context.Context, store thread.Store, id string, seq uint64) string {
	what, desc := "already posted", fmt.Sprintf("seq %d", seq)
	if f, err := thread.ReadAt(ctx, store, id, seq); err == nil {
		if drive.AnsweredRequest(f) != "" {
			what = "already answered"
		}
		desc = fmt.Sprintf("%s (seq %d)", present.Describe(f), seq)
	}
	return what + ": " + desc + "; nothing appended"
}

// PostedDoc is what -o json prints of a post: where it is in the thread's
// log, whether it was there already, and the facts the command appended.
type PostedDoc struct {
	Thread    string       `json:"thread"`
	Seq       uint64       `json:"seq"`
	Duplicate bool         `json:"duplicate"`
	Facts     []facts.Fact `json:"facts"`
}
