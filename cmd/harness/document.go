package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/tell"
)

// versionText is what --version prints for the command c (the root): the
// line, or with -o json the document (tell.Version). Cobra prints it
// through the root's version template (see rootCmd), after parsing the
// flags.
func versionText(c *cobra.Command) (string, error) {
	out := "text"
	if f := c.Flags().Lookup("output"); f != nil {
		out = f.Value.String()
	}
	return tell.VersionOf(version(), commit).Text(out) // text: the flag's value refuses any other
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
