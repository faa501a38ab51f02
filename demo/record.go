package demo

import (
	"fmt"
	"strings"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
)

// Record is a Reporter that keeps what the demo did, as one JSON
// document (harness demo -o json prints it): the demo thread's facts,
// where it stood when parked and when done, the workers' records, and its
// verified replay.
type Record struct {
	// Root is the workspace; Kept says the caller keeps it (Run sets
	// neither: the caller does).
	Root          string        `json:"workspace"`
	Kept          bool          `json:"kept"`
	Git           bool          `json:"git"`
	Facts         []facts.Fact  `json:"facts"`
	ParkedAt      *drive.State  `json:"parked"`
	DoneAt        *drive.State  `json:"done"`
	WorkerRecords []WorkerState `json:"workers"`
	// OK says the replay verified; VerifyError why not.
	OK          bool   `json:"verified"`
	VerifyError string `json:"verify_error,omitempty"`
	// Audit is the replay, a line a fact.
	Audit []string `json:"audit"`
}

// WorkerState is a worker's record, as a Record keeps it.
type WorkerState struct {
	Name        string               `json:"name"`
	Does        string               `json:"does"`
	Thread      string               `json:"thread"`
	Report      facts.Report         `json:"report"`
	Observation facts.Observation    `json:"observation"`
	EffectState facts.EffectState    `json:"effect_state"`
	Check       *facts.CheckRecorded `json:"check,omitempty"`
	Status      harness.Status       `json:"status"`
}

// stateOf keeps a thread's state: the one document of it (drive.State).
func stateOf(st drive.State) *drive.State { return &st }

// The Reporter's methods: each keeps what it is told.

// Workspace keeps whether the workspace is a git repository.
func (r *Record) Workspace(root string, git bool) { r.Root, r.Git = root, git }

// Fact keeps the demo thread's facts (not the workers').
func (r *Record) Fact(f facts.Fact) {
	if !strings.HasPrefix(f.Thread, "worker-") {
		r.Facts = append(r.Facts, f)
	}
}

// Parked keeps where the thread stood, parked.
func (r *Record) Parked(st drive.State) { r.ParkedAt = stateOf(st) }

// Answered keeps nothing: the answer is among the facts.
func (r *Record) Answered(drive.State) {}

// Done keeps where the thread stood, done.
func (r *Record) Done(st drive.State, _ audit.Audit) { r.DoneAt = stateOf(st) }

// Workers keeps the workers' records.
func (r *Record) Workers(ws []Worker) {
	for _, w := range ws {
		r.WorkerRecords = append(r.WorkerRecords, WorkerState{w.Name, w.Does, w.Thread, w.Report, w.Observation, w.EffectState, w.Check, w.Status})
	}
}

// Verified keeps the replay and whether it verified.
func (r *Record) Verified(record audit.Audit, err error) {
	r.OK = err == nil
	if err != nil {
		r.VerifyError = err.Error()
	}
	for _, e := range record.Entries {
		r.Audit = append(r.Audit, fmt.Sprintf("%d %s %s", e.Fact.Seq, e.Fact.Kind, present.Describe(e.Fact)))
	}
}
