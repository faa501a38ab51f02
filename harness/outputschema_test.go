package harness_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// A thread recorded with an output schema this harness no longer reads
// (here draft-04, which an older harness compiled) is not driven on: the
// resume fails, naming the draft, before any answer is judged by a schema
// read otherwise than when it was recorded.
func TestResumeRefusesAnOutputSchemaItCannotCheck(t *testing.T) {
	ctx := context.Background()
	good := []byte(`{"type": "object", "required": ["ttl"], "properties": {"ttl": {"type": "integer"}}}`)
	script := `{"text": "no"}
{"text": "still no"}
{"text": "not yet"}
{"text": "{\"ttl\": 300}"}`
	e := newTree(t, nil, script, harness.WithOutputSchema(good, "schema.json"))
	out, err := e.rt.Start(ctx, e.actor, "p", "What is the TTL?")
	require.NoError(t, err)
	require.Equal(t, harness.StatusFailed, out.Status, "three invalid answers")

	// The same log, as if recorded with a draft-04 schema.
	draft4 := facts.RawJSON(`{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object", "properties": {"ttl": {"type": "integer", "maximum": 10, "exclusiveMaximum": true}}}`)
	other, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, other.Close()) })
	var after uint64
	for _, f := range e.log("p") {
		d := facts.Draft{Kind: f.Kind, Cause: f.Cause, Data: f.Data}
		if f.Kind == facts.KindSystemConfigured {
			sys := mustDecode[facts.SystemConfigured](t, f)
			sys.Output = &facts.OutputSchema{Schema: draft4, Digest: facts.SchemaDigest(draft4), Source: "old.json"}
			d, err = facts.NewDraft(f.Kind, f.Cause, sys)
			require.NoError(t, err)
		}
		h, err := other.Append(ctx, "p", after, d)
		require.NoError(t, err)
		after = h.Seq
	}
	o := newTree(t, other, script)
	_, err = o.rt.Thread(o.actor, "p").Resume(ctx)
	require.ErrorIs(t, err, scheduler.ErrSchemaDraft)
	require.ErrorContains(t, err, "draft-04")
	require.ErrorContains(t, err, "old.json")
	require.Len(t, o.log("p"), int(after), "nothing was appended")
}
