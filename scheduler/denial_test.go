package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// The model is told a denial's reason as a sentence of its own: the text
// that follows it never reads as part of it.
func TestDenialReasonIsASentence(t *testing.T) {
	for _, tc := range []struct {
		reason string
		then   facts.AfterDenial
		want   string
	}{
		{"keep 60 until the load test", facts.DenyContinue, "Denied by ana: this tool call did not run. Reason: keep 60 until the load test. Go on without it: do what was asked another way, or say what you need."},
		{"why change it?", facts.DenyContinue, "Reason: why change it? Go on without it"},
		{"  no.  \n", facts.DenyContinue, "Reason: no. Go on without it"},
		{"wrong approach", facts.DenyStop, "Denied by ana, who stopped the thread here: this tool call did not run, nor any call after it. Reason: wrong approach."},
		{"", facts.DenyContinue, "Denied by ana: this tool call did not run. Go on without it"},
	} {
		s := scheduler.New(env())
		seq := uint64(0)
		add := func(kind facts.Kind, cause string, payload any) {
			d, err := facts.NewDraft(kind, cause, payload)
			require.NoError(t, err)
			seq++
			require.NoError(t, s.Step(facts.Fact{Thread: "t", Seq: seq, Kind: kind, Cause: cause, Data: d.Data, At: time.Unix(1, 0).UTC()}))
		}
		add(facts.KindUserMessage, "ingress/start", facts.UserMessage{Text: "write"})
		add(facts.KindModelTurn, "infer/turn/1", facts.ModelTurn{Turn: 1, ToolCalls: []facts.ToolCall{{ID: "c", Name: "write_file", Args: "{}"}}})
		add(facts.KindActionRequested, "tool/request/1-c", facts.ActionRequested{ActionID: "1-c", Capability: "write", Confirm: true, Payload: facts.RawJSON("{}"), Adapter: "write_file"})
		add(facts.KindConfirmationRequested, "confirm/1-c", facts.ConfirmationRequested{RequestID: "1-c", CallID: "1-c", Tool: "write_file", Args: "{}"})
		add(facts.KindConfirmationAnswered, "ingress/a1", facts.ConfirmationAnswered{RequestID: "1-c", By: "ana", Reason: tc.reason, Then: tc.then})
		msgs := s.Messages()
		last := msgs[len(msgs)-1]
		require.Equal(t, facts.RoleTool, last.Role)
		require.Contains(t, last.Text, tc.want, "reason %q", tc.reason)
		require.NotContains(t, last.Text, "..", "reason %q", tc.reason)
	}
}
