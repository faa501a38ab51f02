package tell

import (
	"io"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/stock"
)

// FactDoc is a fact shown alone, as JSON.
type FactDoc struct {
	Fact facts.Fact `json:"fact"`
}

// StepDoc is the JSON document of a step (stock.Session.Step): the
// action's document, the turn's, the instructions', or the fact's.
func StepDoc(st stock.Step) any {
	switch {
	case st.Action != nil:
		return st.Action.Doc
	case st.Turn != nil:
		return TurnDoc{Fact: st.Fact, Turn: *st.Turn, Request: string(st.Request), Response: string(st.Response)}
	case st.Instructions != nil:
		return InstructionsDoc{Fact: st.Fact, Turn: st.Instructions.Turn, Files: instructionDocs(st)}
	}
	return FactDoc{st.Fact}
}

// Step writes a step whole: an action (Action), a model turn (Turn), the
// instructions a turn was given (Instructions), or a fact (Fact).
func Step(w io.Writer, st stock.Step) {
	switch {
	case st.Action != nil:
		Action(w, st.Thread, st.Action.Action, st.Action.Call, st.Action.Doc, time.Duration(st.CommandTimeout))
	case st.Turn != nil:
		Turn(w, st.Thread, st.Fact, *st.Turn, Exchange{Request: st.Request, Response: st.Response, RequestErr: st.RequestErr, ResponseErr: st.ResponseErr})
	case st.Instructions != nil:
		Instructions(w, st.Thread, st.Fact.Seq, st.Instructions.Turn, instructionDocs(st))
	default:
		Fact(w, st.Fact)
	}
}

// instructionDocs are the step's instruction files, each with its text
// kept or why not.
func instructionDocs(st stock.Step) []InstructionDoc {
	files := make([]InstructionDoc, len(st.Instructions.Files))
	for i, fl := range st.Instructions.Files {
		files[i] = InstructionDoc{InstructionFile: fl, Text: st.Texts[i], Note: st.Notes[i]}
	}
	return files
}
