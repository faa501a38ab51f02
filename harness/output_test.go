package harness_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
)

// A thread started with an output schema checks its final answer; its
// child answers its parent in words, unchecked. An invalid answer goes
// back to the model, the valid one is the thread's output, and the log
// verifies.
func TestOutputSchemaTree(t *testing.T) {
	ctx := context.Background()
	schema := []byte(`{"type": "object", "required": ["ttl"], "properties": {"ttl": {"type": "integer"}}}`)
	e := newTree(t, nil, `{"text": "Delegating.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Find the TTL\",\"tools\":[\"read_file\"]}"}]}
{"text": "The TTL is 300."}
{"text": "{\"ttl\": 300}"}
{"thread": "1-d1", "text": "It is 300, in words."}`, harness.WithOutputSchema(schema, "schema.json"))
	out, err := e.rt.Start(ctx, e.actor, "p", "What is the TTL?")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)

	var verdicts []facts.OutputChecked
	for _, f := range e.log("p") {
		switch f.Kind {
		case facts.KindSystemConfigured:
			sys := mustDecode[facts.SystemConfigured](t, f)
			require.NotNil(t, sys.Output)
			require.Equal(t, facts.SchemaDigest(schema), sys.Output.Digest)
		case facts.KindOutputChecked:
			verdicts = append(verdicts, mustDecode[facts.OutputChecked](t, f))
		}
	}
	require.Len(t, verdicts, 2, "the turn with a delegation is no final answer")
	require.False(t, verdicts[0].Valid)
	require.Contains(t, strings.Join(verdicts[0].Errors, "\n"), "not one JSON document")
	require.True(t, verdicts[1].Valid)
	require.JSONEq(t, `{"ttl": 300}`, string(verdicts[1].Output))

	for _, f := range e.log("p.1-d1") {
		require.NotEqual(t, facts.KindOutputChecked, f.Kind, "a child's answer is not checked")
		if f.Kind == facts.KindSystemConfigured {
			require.Nil(t, mustDecode[facts.SystemConfigured](t, f).Output)
		}
	}
	v, err := e.rt.Thread(e.actor, "p").View(ctx)
	require.NoError(t, err)
	require.JSONEq(t, `{"ttl": 300}`, string(v.Turn.Output))
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "p"))
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "p.1-d1"))
}

// A schema that is not one is refused when the runtime is configured.
func TestOutputSchemaRefused(t *testing.T) {
	_, err := harness.NewConfig(harness.WithOutputSchema([]byte(`{"type": "objekt"}`), "bad.json"))
	require.ErrorContains(t, err, "bad.json")
}
