package model_test

import (
	"bufio"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

// A script line longer than a line may be is an error naming the line and
// the limit: a decision is never cut to fit.
func TestScriptLineTooLong(t *testing.T) {
	script := `{"text": "one"}` + "\n" + `{"text": "` + strings.Repeat("x", 16<<20) + `"}` + "\n"
	_, err := model.ParseScript("big", []byte(script))
	require.ErrorIs(t, err, bufio.ErrTooLong)
	require.ErrorContains(t, err, "script big line 2: longer than the 16777216 bytes (16 MiB) a line may be")
}

// A script path that names a device or a directory is an error at once,
// never a read that does not end.
func TestLoadScriptReadsOnlyARegularFile(t *testing.T) {
	for _, path := range []string{"/dev/zero", t.TempDir()} {
		_, err := model.LoadScript(path)
		require.ErrorContains(t, err, "not a regular file", path)
	}
}

// A decision cut off at a limit carries no call or question to act on:
// Validate refuses one that does, and accepts one with only its text (or
// none).
func TestValidateCutDecision(t *testing.T) {
	cut := &facts.Cut{Calls: []string{"write_file"}, InARow: 1}
	require.NoError(t, model.Decision{Cut: cut}.Validate())
	require.NoError(t, model.Decision{Text: "The TTL is", Cut: cut}.Validate())
	require.Error(t, model.Decision{Cut: cut, ToolCalls: []facts.ToolCall{{ID: "c", Name: "write_file", Args: "{}"}}}.Validate())
	require.Error(t, model.Decision{Cut: cut, Question: &facts.Question{Text: "which?"}}.Validate())
}

// A script's line whose only call is ask_person asks the person, as a
// provider's model's does; where a tool of that name is offered, it is a
// call of that tool.
func TestScriptedAskPersonIsAQuestion(t *testing.T) {
	s, err := model.ParseScript("s", []byte(`{"text": "Asking.", "tool_calls": [{"id": "q1", "name": "ask_person", "args": "{\"text\":\"Which, 2 or 3?\",\"options\":[\"2\",\"3\"]}"}]}`+"\n"))
	require.NoError(t, err)
	d, err := s.Turn(context.Background(), model.Request{Thread: "t1", Turn: 1})
	require.NoError(t, err)
	require.Empty(t, d.ToolCalls)
	require.Equal(t, &facts.Question{Text: "Which, 2 or 3?", Options: []string{"2", "3"}}, d.Question)

	d, err = s.Turn(context.Background(), model.Request{Thread: "t1", Turn: 1, Tools: []facts.ToolSchema{{Name: model.AskTool}}})
	require.NoError(t, err)
	require.Nil(t, d.Question)
	require.Len(t, d.ToolCalls, 1)
}
