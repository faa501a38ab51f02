package tell

import (
	"errors"
	"fmt"
	"strings"

	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/rewind"
)

// ErrorDoc is what the command line prints as its JSON document (-o json)
// for a command that failed: stable keys, whatever the failure.
type ErrorDoc struct {
	Error struct {
		// Kind is usage (a bad command line; nothing changed), interrupted,
		// or error.
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
	Exit int `json:"exit"`
}

// ErrorDocOf is the document of a command that exited with code, the
// error err (nil: none said); usage says the command line was wrong.
// A code from 128 is an interrupt's.
func ErrorDocOf(code int, usage bool, err error) ErrorDoc {
	var d ErrorDoc
	d.Exit = code
	switch {
	case usage:
		d.Error.Kind = "usage"
	case code >= 128:
		d.Error.Kind = "interrupted"
	default:
		d.Error.Kind = "error"
	}
	if err != nil {
		d.Error.Message = PersonError(err)
	} else {
		d.Error.Message = fmt.Sprintf("exit %d", code)
	}
	return d
}

// PersonError is err's message for a person: its control characters
// escaped (an error can quote what a model wrote). An undo's refusal is
// shown as the lines it is made of (rewind.UndoError.Lines), each escaped
// on its own: a path's line feed cannot start a line of its own.
func PersonError(err error) string {
	var ue *rewind.UndoError
	if errors.As(err, &ue) {
		lines := ue.Lines()
		if prefix, ok := strings.CutSuffix(err.Error(), ue.Error()); ok {
			lines[0] = prefix + lines[0]
			for i, l := range lines {
				lines[i] = present.EscapeLine(l)
			}
			return strings.Join(lines, "\n")
		}
	}
	return present.EscapeLine(err.Error())
}
