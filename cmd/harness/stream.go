package main

import (
	"github.com/spf13/cobra"
)

// -o stream-json writes what a command that drives a thread does as JSON
// Lines (drive.Line; docs/stream.schema.json): each fact as it is
// appended, progress (the model's text as it streams, a command's output
// as it comes; ephemeral), and one result line at the end, whatever the
// end. log --follow -o jsonl writes the same lines.

// streamOut reports whether stdout is the stream of lines.
func (a *app) streamOut() bool {
	return a.output == "stream-json" || a.output == "jsonl" && a.followLog
}

// streamRefuses is the usage error of -o stream-json on a command that
// drives no thread: the commands that drive one, and the answers with
// --resume.
func streamRefuses(cmd *cobra.Command) error {
	switch cmd.Name() {
	case "run":
		for _, flag := range []string{"detach", "serve"} {
			if on, _ := cmd.Flags().GetBool(flag); on {
				return usageError("-o stream-json: run --%s drives no thread here; drop one of them", flag)
			}
		}
		return nil
	case "resume", "continue":
		return nil
	case "approve", "deny", "answer", "post":
		if on, _ := cmd.Flags().GetBool("resume"); on {
			return nil
		}
		return usageError("-o stream-json is for an answer that resumes the thread: add --resume, or use -o json")
	case "log":
		return usageError("log -o stream-json: log --follow -o jsonl writes the stream's lines")
	}
	return usageError("-o stream-json is for the commands that drive a thread (run, resume, continue, and approve, deny, answer or post with --resume); use -o text or -o json")
}

// failedStatus is the result's status of a command that ended with code
// before it said how the thread stands.
func failedStatus(code int) string {
	if code >= 128 {
		return "interrupted"
	}
	return "error"
}
