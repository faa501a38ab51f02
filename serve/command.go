package serve

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/present"
)

// shownCommand is a run_command call as the page shows it: the command
// verbatim, line by line, each escaped as the terminal escapes it (never
// JSON-escaped: "&&" and ">" as written), and its timeout.
type shownCommand struct {
	Lines []string
	// Timeout is the call's own, "" when it gives none (the workspace's
	// default applies).
	Timeout string
}

// commandOf reads a run_command call's arguments; ok is false for another
// tool, or arguments that do not read as a command.
func commandOf(tool, args string) (shownCommand, bool) {
	if tool != "run_command" {
		return shownCommand{}, false
	}
	var c struct {
		Command *string  `json:"command"`
		Timeout *float64 `json:"timeout_seconds"`
	}
	if json.Unmarshal([]byte(args), &c) != nil || c.Command == nil {
		return shownCommand{}, false
	}
	out := shownCommand{Lines: present.CommandLines(*c.Command)}
	if c.Timeout != nil {
		out.Timeout = strconv.FormatFloat(*c.Timeout, 'g', -1, 64) + "s"
	}
	return out, true
}

// argsText is a call's arguments as the actions table shows them: a
// command as written (its lines joined), other arguments as JSON without
// the escapes JSON gives "&", "<" and ">" — the page escapes them for
// HTML itself.
func argsText(tool string, args []byte) string {
	var c struct {
		Command *string `json:"command"`
	}
	if tool == "run_command" && json.Unmarshal(args, &c) == nil && c.Command != nil {
		return strings.ReplaceAll(strings.TrimSuffix(*c.Command, "\n"), "\n", " ⏎ ")
	}
	var v any
	if json.Unmarshal(args, &v) != nil {
		return string(args)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return string(args)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
