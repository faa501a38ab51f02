package drive

import (
	"encoding/json"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// A thread driven unattended is told as a stream of lines, JSON Lines,
// for programs (docs/stream.schema.json is its schema): every fact as it
// is appended, in the JSON of facts.Fact (the same as a log's export and
// the API's), progress events between them (ephemeral: not part of the
// record), and one result at the end. The command line writes it for
// run, resume and continue with -o stream-json, and for log --follow
// -o jsonl.

// LineType says what a stream Line carries.
type LineType string

// The types of stream lines.
const (
	LineFact     LineType = "fact"
	LineProgress LineType = "progress"
	LineResult   LineType = "result"
)

// Line is one line of the stream: Type says which of Fact, Progress and
// Result it carries. A progress line is marked Ephemeral.
type Line struct {
	Type      LineType    `json:"type"`
	Ephemeral bool        `json:"ephemeral,omitempty"`
	Fact      *facts.Fact `json:"fact,omitempty"`
	Progress  *Event      `json:"progress,omitempty"`
	Result    *Result     `json:"result,omitempty"`
}

// Result is how a driven thread ended, the stream's last line.
type Result struct {
	Thread string `json:"thread"`
	// Status is the thread's (done, parked, failed, stopped, resumable,
	// step_limit), or "error" when the command failed before a state was
	// read (Error says why) or "interrupted".
	Status string `json:"status"`
	// Exit is the command's exit code: 0 done, 3 parked, 1 failed, 2 a
	// usage error, 130 interrupted.
	Exit int `json:"exit"`
	// WaitsFor are the kinds of the requests a parked thread waits for
	// (confirmation, question, reconcile, child), in order.
	WaitsFor []fold.WaitKind `json:"waits_for,omitempty"`
	// Turns and Tokens are what the thread's budget counted, its
	// children's included.
	Turns  int   `json:"turns"`
	Tokens int64 `json:"tokens"`
	// Cost is what the thread's turns cost (State.Cost).
	Cost *Cost `json:"cost,omitempty"`
	// Text is the text of the last model turn the command ran, "" when it
	// ran none.
	Text string `json:"text,omitempty"`
	// Output is the final answer checked valid against the thread's
	// output schema (State.Output), when it is done and has one.
	Output facts.RawJSON `json:"output,omitempty"`
	// Error says why the command failed, when it did.
	Error string `json:"error,omitempty"`
	// State is the thread's state document, when one was read.
	State *State `json:"state,omitempty"`
}

// ResultOf is the result of a drive that ended in st; text is the text
// of the last model turn it ran.
func ResultOf(st State, exit int, text string) Result {
	r := Result{Thread: st.Thread, Status: string(st.Status), Exit: exit, Turns: st.Turns, Tokens: st.Tokens, Cost: st.Cost, Text: text, Output: st.Output, State: &st}
	for _, w := range st.Waits {
		r.WaitsFor = append(r.WaitsFor, w.Kind)
	}
	return r
}

// LastText is the text of the last model.turn among fs, "" when there
// is none.
func LastText(fs []facts.Fact) string {
	for i := len(fs) - 1; i >= 0; i-- {
		if fs[i].Kind != facts.KindModelTurn {
			continue
		}
		if p, err := facts.Decode[facts.ModelTurn](fs[i]); err == nil {
			return p.Text
		}
	}
	return ""
}

// AppendFactLine appends f's stream line to b, with its newline: f in
// the JSON of facts.Fact.MarshalJSON, the one encoding of a fact.
func AppendFactLine(b []byte, f facts.Fact) ([]byte, error) {
	js, err := f.MarshalJSON()
	if err != nil {
		return b, err
	}
	b = append(b, `{"type":"fact","fact":`...)
	b = append(b, js...)
	return append(b, "}\n"...), nil
}

// AppendProgressLine appends e's stream line to b, with its newline.
func AppendProgressLine(b []byte, e Event) ([]byte, error) {
	return appendLine(b, Line{Type: LineProgress, Ephemeral: true, Progress: &e})
}

// AppendResultLine appends r's stream line to b, with its newline.
func AppendResultLine(b []byte, r Result) ([]byte, error) {
	return appendLine(b, Line{Type: LineResult, Result: &r})
}

func appendLine(b []byte, l Line) ([]byte, error) {
	js, err := json.Marshal(l)
	if err != nil {
		return b, fmt.Errorf("stream %s line: %w", l.Type, err)
	}
	return append(append(b, js...), '\n'), nil
}
