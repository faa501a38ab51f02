package drive

import (
	"context"

	"github.com/seed-7cc7a084/harness/harness"
)

// LastPosted is the last answer of answered (AnswerAll) that was
// appended; ok is false when every one was given before (Duplicate).
func LastPosted(answered []Answered) (last harness.Posted, ok bool) {
	for _, a := range answered {
		if !a.Posted.Duplicate {
			last, ok = a.Posted, true
		}
	}
	return last, ok
}

// PostedOf is the post that stands for the answers answered (AnswerAll)
// of th in a document: the last one appended (LastPosted), or when every
// one was given before, the thread's head, given before (Duplicate).
func PostedOf(ctx context.Context, th *harness.Thread, answered []Answered) (harness.Posted, error) {
	if last, ok := LastPosted(answered); ok {
		return last, nil
	}
	h, err := th.Store().Head(ctx, th.ID())
	if err != nil {
		return harness.Posted{}, err
	}
	return harness.Posted{Seq: h.Seq, Duplicate: true}, nil
}
