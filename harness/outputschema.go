package harness

import (
	"fmt"

	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// checkableOutput returns why the output schema a thread was started with
// cannot be checked any more (a draft or a number harness now refuses:
// see scheduler.CompileSchema), or nil: such a thread is not driven on, so
// that its answers are never judged by a schema read otherwise than when
// it was recorded.
func checkableOutput(id string, f *fold.Fold[Services]) error {
	v, err := viewOf(id, f)
	if err != nil || v.Turn.System == nil || v.Turn.System.Output == nil {
		return nil // (a view that fails is the loop's to report)
	}
	o := v.Turn.System.Output
	if _, err := scheduler.CompileOutputSchema(o.Schema); err != nil {
		return fmt.Errorf("resume %s: the output schema it was started with (%s) cannot be checked by this harness: %w", id, o.Source, err)
	}
	return nil
}
