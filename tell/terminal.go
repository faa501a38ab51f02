package tell

import (
	"os"

	"golang.org/x/term"
)

// IsTerminal reports whether f is a file that is a terminal.
func IsTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// ansi are the terminal's codes of the colours a Paint knows.
var ansi = map[string]string{"green": "32", "yellow": "33", "red": "31", "dim": "2", "bold": "1"}

// ANSI is a Paint for a terminal: s in color's escape codes.
func ANSI(color, s string) string {
	return "\x1b[" + ansi[color] + "m" + s + "\x1b[0m"
}
