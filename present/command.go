package present

import (
	"encoding/json"
	"strconv"
	"time"
)

// Command is a run_command call as a person reads it: the command and how
// long it may run.
type Command struct {
	// Text is the command, verbatim.
	Text string
	// Seconds is the timeout the call asked for, nil when it asked none.
	Seconds *float64
	// Default is the timeout a call that asks none gets (0: not known).
	Default time.Duration
}

// CommandOf reads a run_command call's arguments; ok is false for another
// tool, or arguments that do not read as a command. def is the default
// timeout.
func CommandOf(tool, args string, def time.Duration) (c Command, ok bool) {
	if tool != "run_command" {
		return Command{}, false
	}
	var in struct {
		Command *string  `json:"command"`
		Timeout *float64 `json:"timeout_seconds"`
	}
	if json.Unmarshal([]byte(args), &in) != nil || in.Command == nil {
		return Command{}, false
	}
	return Command{Text: *in.Command, Seconds: in.Timeout, Default: def}, true
}

// Timeout says how long the command may run.
func (c Command) Timeout() string {
	if c.Seconds != nil {
		return "timeout " + strconv.FormatFloat(*c.Seconds, 'g', -1, 64) + "s"
	}
	if c.Default > 0 {
		return "timeout " + strconv.FormatFloat(c.Default.Seconds(), 'g', -1, 64) + "s (the default)"
	}
	return "the default timeout"
}

// Lines are the command, verbatim, escaped, a line each.
func (c Command) Lines() []string { return CommandLines(c.Text) }
