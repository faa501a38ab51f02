package drive

import "github.com/seed-7cc7a084/harness/harness"

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
