package tell

import (
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/rerun"
	"github.com/seed-7cc7a084/harness/seal"
)

// ForkDoc is the JSON document of a fork: the new thread, the thread and
// seq it was forked from, its head and how it stands.
type ForkDoc struct {
	Thread string         `json:"thread"`
	From   string         `json:"from"`
	At     uint64         `json:"at"`
	Seq    uint64         `json:"seq"`
	Status harness.Status `json:"status"`
}

// StopDoc is the JSON document of a stop: how the thread stands, why,
// and the facts the stop appended (in the thread and its children).
type StopDoc struct {
	Thread string         `json:"thread"`
	Status harness.Status `json:"status"`
	Reason string         `json:"reason,omitempty"`
	Seq    uint64         `json:"seq"`
	Facts  []facts.Fact   `json:"facts"`
}

// KeyDoc is the JSON document of a person's key: the public key, the
// file of the private one, the witness log, and whether it was made now.
type KeyDoc struct {
	Key     seal.PublicKey `json:"key"`
	Path    string         `json:"path"`
	Witness string         `json:"witness"`
	Made    bool           `json:"made"`
}

// RerunSuiteDoc is the JSON document of a suite of reruns: the model and
// key they ran under, a row each.
type RerunSuiteDoc struct {
	Model string      `json:"model"`
	Key   string      `json:"key"`
	Rows  []rerun.Row `json:"rows"`
}
