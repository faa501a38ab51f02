package stock

import (
	"io"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
)

// VerifyExport verifies a JSON Lines export of a thread's log (as
// facts.WriteJSONSeq writes it) against the place's stock actor, as
// audit.VerifyFacts does: the hash chain, and that the fold enabled every
// caused fact. id names the thread ("": the first fact's); n is how many
// facts the export holds. An export that parses to no facts is
// ErrEmptyExport.
func (p Place) VerifyExport(r io.Reader, id string) (thread string, n int, err error) {
	cfg, err := harness.NewConfig()
	if err != nil {
		return id, 0, err
	}
	st, err := NewStock(p, cfg, readingOnly()) // it runs no command
	if err != nil {
		return id, 0, err
	}
	defer st.Close()
	fs, err := facts.ParseJSON(r)
	if err != nil {
		return id, len(fs), err
	}
	if len(fs) == 0 {
		return id, 0, ErrEmptyExport
	}
	if id == "" {
		id = fs[0].Thread
	}
	return id, len(fs), audit.VerifyFacts(st.Actor, id, func(yield func(facts.Fact, error) bool) {
		for _, f := range fs {
			if !yield(f, nil) {
				return
			}
		}
	})
}
