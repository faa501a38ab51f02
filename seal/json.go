package seal

import (
	"encoding/json"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
)

// MarshalJSON writes a verdict as every front end gives it: the head
// sealed (seq, hash), when and by which key, the witness log and its
// line, and the verdict with its reason.
func (v Verdict) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Seq     uint64     `json:"seq"`
		Hash    facts.Hash `json:"hash"`
		At      time.Time  `json:"at"`
		Key     PublicKey  `json:"key"`
		Witness string     `json:"witness"`
		Line    int        `json:"line,omitempty"`
		Verdict Status     `json:"verdict"`
		Reason  string     `json:"reason,omitempty"`
	}{v.Seq, v.Hash, v.At, v.Key, v.Witness, v.Line, v.Status, v.Reason})
}

// Summary is a check of a thread's seals as every front end gives it:
// whether a trusted seal holds (Sealed), whether the check passed (OK,
// else Error), each seal's verdict, and how many seals of a thread of the
// same id in another store were not checked.
type Summary struct {
	Sealed    bool      `json:"sealed"`
	OK        bool      `json:"ok"`
	Error     string    `json:"error,omitempty"`
	Seals     []Verdict `json:"seals"`
	Elsewhere int       `json:"elsewhere,omitempty"`
	// Unread say where seals were looked for and not read whole (see
	// Report.Unread).
	Unread []string `json:"unread,omitempty"`
}

// SummaryOf is the summary of the report r of a check that returned err.
func SummaryOf(r Report, err error) Summary {
	out := Summary{Sealed: r.Sealed(), OK: err == nil, Seals: append([]Verdict{}, r.Seals...), Elsewhere: r.Elsewhere, Unread: r.Unread}
	if err != nil {
		out.Error = err.Error()
	}
	return out
}
