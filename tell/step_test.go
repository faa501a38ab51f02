package tell_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

func TestStepDispatches(t *testing.T) {
	msg := fact(t, 1, facts.KindUserMessage, facts.UserMessage{Text: "hi"})
	st := stock.Step{Thread: "t1", Fact: msg}
	require.Equal(t, tell.FactDoc{Fact: msg}, tell.StepDoc(st))
	var b bytes.Buffer
	tell.Step(&b, st)
	require.Contains(t, b.String(), "hi")

	mt := facts.ModelTurn{Text: "Reading."}
	st = stock.Step{Thread: "t1", Fact: fact(t, 2, facts.KindModelTurn, mt), Turn: &mt, Request: []byte(`{"a":1}`), ResponseErr: errors.New("not kept")}
	doc, ok := tell.StepDoc(st).(tell.TurnDoc)
	require.True(t, ok)
	require.Equal(t, `{"a":1}`, doc.Request)
	b.Reset()
	tell.Step(&b, st)
	require.Contains(t, b.String(), "Reading.")
	require.Contains(t, b.String(), "exchange")

	ir := facts.InstructionsRead{Turn: 1, Files: []facts.InstructionFile{{Scope: "project", Path: "/w/AGENTS.md", Digest: "0123456789abcdef", Size: 9}, {Scope: "project", Path: "/w/x/AGENTS.md", Skipped: "too big"}}}
	st = stock.Step{Thread: "t1", Fact: fact(t, 3, facts.KindInstructionsRead, ir), Instructions: &ir, Texts: []string{"Be brief.", ""}, Notes: []string{"", ""}}
	idoc, ok := tell.StepDoc(st).(tell.InstructionsDoc)
	require.True(t, ok)
	require.Equal(t, "Be brief.", idoc.Files[0].Text)
	b.Reset()
	tell.Step(&b, st)
	require.Contains(t, b.String(), "Be brief.")
}
