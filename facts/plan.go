package facts

import (
	"errors"
	"fmt"
)

// Plan mode: a thread that plans is offered no tool that writes, its
// commands run with the workspace read-only, and its model is asked for a
// plan; its final answer is recorded as the plan, and acting on it takes a
// person's answer.
const (
	// KindPlanModeSet: a person switched plan mode on or off from here on
	// (PlanModeSet), posted from outside: when the thread starts (run
	// --plan), and when a person switches it or acts on a plan.
	KindPlanModeSet Kind = "plan.mode_set"
	// KindPlanRecorded: the final answer of a model turn in plan mode, the
	// plan (PlanRecorded). The thread then waits for a person: acting on
	// it switches plan mode off.
	KindPlanRecorded Kind = "plan.recorded"
)

func init() {
	register[PlanModeSet](KindPlanModeSet)
	register[PlanRecorded](KindPlanRecorded)
}

// PlanModeSet is the payload of plan.mode_set.
type PlanModeSet struct {
	// On is whether the thread plans from here on.
	On bool `msgpack:"on,omitempty" json:"on"`
	// By is who switched it: the person whose command posted it.
	By string `msgpack:"by,omitempty" json:"by,omitempty"`
	// Acts, when set, is the model turn of the plan a person chose to act
	// on by switching plan mode off.
	Acts int `msgpack:"acts,omitempty" json:"acts,omitempty"`
}

// Validate requires that a plan acted on switches plan mode off.
func (p PlanModeSet) Validate() error {
	switch {
	case p.Acts < 0:
		return fmt.Errorf("acts %d is negative", p.Acts)
	case p.Acts > 0 && p.On:
		return errors.New("acting on a plan switches plan mode off: on must be false")
	}
	return nil
}

// PlanRecorded is the payload of plan.recorded.
type PlanRecorded struct {
	// Turn is the model turn whose answer is the plan.
	Turn int    `msgpack:"turn,omitempty" json:"turn,omitempty"`
	Text string `msgpack:"text,omitempty" json:"text,omitempty"`
}

// Validate requires the turn.
func (p PlanRecorded) Validate() error {
	if p.Turn < 1 {
		return fmt.Errorf("turn %d: a plan is a model turn's answer, from 1", p.Turn)
	}
	return nil
}
