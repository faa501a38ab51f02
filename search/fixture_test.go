package search

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// The fixture's threads vary these, each by its own period, so that
// every combination occurs.
var (
	fxTools   = []string{"write_file", "run_command", "edit_file"}
	fxPaths   = []string{"go.mod", "cache.toml", "src/main.go", "docs/guide/intro.md"}
	fxPeople  = []string{"ana", "bob", "cy", "dee", "eve"}
	fxModels  = []string{"openai:gpt-test", "anthropic:claude-test"}
	fxEffects = []facts.EffectState{facts.EffectObserved, facts.EffectUnknown}
	fxChecks  = []facts.Verdict{facts.VerdictPass, facts.VerdictFail, facts.VerdictPass}
	fxTopics  = []string{"cache", "login", "parser", "timeout", "upload", "billing", "search"}
)

// fxThread is what thread i of the fixture did.
type fxThread struct {
	id, tool, path, by, model, topic string
	effect                           facts.EffectState
	check                            facts.Verdict
	word                             string // a word of its command output only it has
}

func fxOf(i int) fxThread {
	return fxThread{
		id:     fmt.Sprintf("t-%05d", i),
		tool:   fxTools[i%len(fxTools)],
		path:   fxPaths[i%len(fxPaths)],
		by:     fxPeople[i%len(fxPeople)],
		model:  fxModels[i%len(fxModels)],
		topic:  fxTopics[i%len(fxTopics)],
		effect: fxEffects[i%len(fxEffects)],
		check:  fxChecks[i%len(fxChecks)],
		word:   fmt.Sprintf("zebra%d", i),
	}
}

// The seqs of a fixture thread's facts.
const (
	seqMessage = iota + 1
	seqConfigured
	seqTurn
	seqRequested
	seqConfirm
	seqAnswer
	seqStarted
	seqCompleted
	seqCheck
	seqDone
	fxFacts = seqDone
)

// drafts are the facts of fixture thread x, as the runtime appends them
// for one approved tool call (the action's request before its
// confirmation, which names the action).
func (x fxThread) drafts(tb testing.TB) []facts.Draft {
	args, err := json.Marshal(map[string]string{"path": x.path, "content": "x"})
	require.NoError(tb, err)
	d := func(kind facts.Kind, payload any) facts.Draft {
		dr, err := facts.NewDraft(kind, "fx/"+string(kind), payload)
		require.NoError(tb, err)
		return dr
	}
	return []facts.Draft{
		d(facts.KindUserMessage, facts.UserMessage{Text: "Please fix the " + x.topic + " bug."}),
		d(facts.KindSystemConfigured, facts.SystemConfigured{Model: x.model, Prompt: "You are a coding agent."}),
		d(facts.KindModelTurn, facts.ModelTurn{Turn: 1, Text: "Looking at the " + x.topic + " code.", ToolCalls: []facts.ToolCall{{ID: "call_1", Name: x.tool, Args: string(args)}}}),
		d(facts.KindActionRequested, facts.ActionRequested{ActionID: "1-call_1", CallID: "call_1", Adapter: x.tool, Payload: facts.RawJSON(args), Confirm: true}),
		d(facts.KindConfirmationRequested, facts.ConfirmationRequested{RequestID: "1-call_1", CallID: "1-call_1", Tool: x.tool, Args: string(args)}),
		d(facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: "1-call_1", Approved: true, By: x.by}),
		d(facts.KindActionStarted, facts.ActionStarted{ActionID: "1-call_1"}),
		d(facts.KindActionCompleted, facts.ActionCompleted{ActionID: "1-call_1",
			Report:      facts.Report{Status: facts.StatusSucceeded, Stdout: "wrote it " + x.word},
			Observation: facts.Observation{Available: true, Changed: []facts.PathChange{{Path: x.path, After: "abc"}}},
			EffectState: x.effect}),
		d(facts.KindCheckRecorded, facts.CheckRecorded{ActionID: "1-call_1", Check: facts.CheckSpec{Name: "file_equals", Target: x.path}, Verdict: x.check}),
		d(facts.KindModelTurn, facts.ModelTurn{Turn: 2, Text: "Done with the " + x.topic + "."}),
	}
}

// fxBase is the time of the fixture's first thread; thread i's facts,
// appended at once, are at fxBase + i minutes.
var fxBase = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func fxAt(i int) time.Time { return fxBase.Add(time.Duration(i) * time.Minute) }

// fixture is a Pebble store with n fixture threads, appended as thread i
// at its times.
func fixture(tb testing.TB, n int) *thread.PebbleStore {
	tb.Helper()
	var i int
	s, err := thread.OpenPebble(tb.TempDir(), thread.WithClock(func() time.Time { return fxAt(i) }))
	require.NoError(tb, err)
	tb.Cleanup(func() { s.Close() })
	for i = 0; i < n; i++ {
		_, err := s.Append(context.Background(), fxOf(i).id, 0, fxOf(i).drafts(tb)...)
		require.NoError(tb, err)
	}
	return s
}
