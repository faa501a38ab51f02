package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/present"
)

// asked shows, on a terminal, a question an MCP server asked while the
// action runs (drive.EventAsked): everything of it is the server's,
// escaped; the command waits for the answer, given on the page, the API,
// MCP or another terminal with harness answer --elicit.
func (l *live) asked(e drive.Event) {
	if l == nil || !l.on || e.Elicit == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	l.erase(&b)
	writeAsked(&b, e)
	io.WriteString(l.w, b.String())
}

// writeAsked writes the question e for a person.
func writeAsked(w io.Writer, e drive.Event) {
	el := e.Elicit
	fmt.Fprintf(w, "? the MCP server %s asks, during action %s (question %s) — its words, not harness's:\n",
		present.EscapeLine(el.Server), present.EscapeLine(e.ActionID), present.EscapeLine(e.Request))
	fmt.Fprintf(w, "    %s\n", present.EscapeLine(e.Text))
	var names []string
	for _, f := range drive.ElicitFields(el) {
		line := fmt.Sprintf("    field %s (%s", present.EscapeLine(f.Name), f.Type)
		if f.Required {
			line += ", required"
		}
		if len(f.Enum) > 0 {
			line += ", one of " + present.EscapeLine(strings.Join(f.Enum, " | "))
		}
		line += ")"
		if f.Title != "" {
			line += ": " + present.EscapeLine(f.Title)
		}
		fmt.Fprintln(w, line)
		// The server names its fields: a name is quoted for the shell
		// the person may paste the command into ("a$(curl …)" is a
		// word, not a command run); a secret is read from stdin.
		if f.Secret {
			names = append(names, "--field "+shellWord(f.Name)+"=-")
		} else {
			names = append(names, "--field "+shellWord(f.Name)+"=…")
		}
	}
	if len(el.Sensitive) > 0 {
		fmt.Fprintf(w, "  ! it asks for what looks like a secret (%s): harness never asks for one this way; give it only if you trust %s (NAME=- reads it from stdin, off the command line)\n",
			present.EscapeLine(strings.Join(el.Sensitive, ", ")), present.EscapeLine(el.Server))
	}
	fmt.Fprintf(w, "  answer on the page, or where a harness serve holds the store: harness answer %s --request %s --elicit accept %s (or --elicit decline, --elicit cancel); Ctrl-C stops the call (it is then in doubt)\n",
		present.EscapeLine(shellWord(e.Thread)), present.EscapeLine(shellWord(e.Request)), present.EscapeLine(strings.Join(names, " ")))
}
