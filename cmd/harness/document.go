package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/tools"
)

// resultJSON is how a command left a thread, for -o json: the thread's
// state — the one document every front end gives of it (drive.State) —
// with what this command adds beside it.
type resultJSON struct {
	drive.State
	// Hint says how to go on from here.
	Hint string `json:"hint,omitempty"`
	// Answers say, for each open request (by its ref), the command that
	// answers it.
	Answers map[string]string `json:"answers,omitempty"`
	// Facts are the facts the command appended.
	Facts []facts.Fact `json:"facts"`
}

// printStateJSON prints the state of a thread as -o json gives it: with
// the preview of each call to confirm when the thread works in this
// workspace, how to answer each request, and the facts appended.
func (a *app) printStateJSON(st drive.State, appended []facts.Fact, s *session) error {
	if st.Workspace == "" || st.Workspace == s.Stock.Config.Workspace {
		st.Preview(s.Place.Root, tools.Preview)
	}
	r := resultJSON{State: st, Hint: goOnHint(st), Facts: appended}
	if r.Facts == nil {
		r.Facts = []facts.Fact{}
	}
	for _, w := range st.Waits {
		if w.Kind == fold.WaitChild {
			continue
		}
		if r.Answers == nil {
			r.Answers = map[string]string{}
		}
		r.Answers[drive.Ref(w)] = answerHint(st.Thread, w)
	}
	return a.printJSON(r)
}

// versionDoc is what --version says: as a line, or with -o json as a
// document with these keys.
type versionDoc struct {
	Version string `json:"version"`
	// Commit is the commit the program was built from ("unknown" when the
	// build records none), Time its time and Modified whether the
	// checkout had changes.
	Commit   string `json:"commit"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

// readVersion reads what the build recorded of itself.
func readVersion() versionDoc {
	v := versionDoc{Version: version(), Commit: cmpOr(commit, "unknown"), Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.Go = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	return v
}

// line is the version as one line: "harness v1.2.3 (commit abc…, TIME;
// go1.26)".
func (v versionDoc) line() string {
	line := fmt.Sprintf("harness %s (commit %s", v.Version, v.Commit)
	if v.Time != "" {
		line += ", " + v.Time
	}
	if v.Modified {
		line += ", modified"
	}
	return line + "; " + v.Go + ")"
}

// versionText is what --version prints for the command c (the root): the
// line, or with -o json the document. Cobra prints it through the root's
// version template (see rootCmd), after parsing the flags.
func versionText(c *cobra.Command) (string, error) {
	out := "text"
	if f := c.Flags().Lookup("output"); f != nil {
		out = f.Value.String()
	}
	switch out {
	case "json":
		b, err := json.MarshalIndent(readVersion(), "", "  ")
		return string(b) + "\n", err
	case "jsonl":
		b, err := json.Marshal(readVersion())
		return string(b) + "\n", err
	}
	return readVersion().line() + "\n", nil // text: the flag's value refuses any other
}

// outputFlag is the value of -o: text, json or jsonl, refused at parsing
// otherwise (so that --version, which runs no command, is refused too).
type outputFlag struct{ s *string }

func (o outputFlag) String() string { return *o.s }

// Type names the flag's values in the help.
func (o outputFlag) Type() string { return "string" }

// Set takes text, json, jsonl or stream-json.
func (o outputFlag) Set(v string) error {
	switch v {
	case "text", "json", "jsonl", "stream-json":
		*o.s = v
		return nil
	}
	return errors.New("want text or json (or jsonl, for harness log; stream-json, for the commands that drive a thread)")
}

func init() {
	cobra.AddTemplateFunc("harnessVersion", versionText)
}
