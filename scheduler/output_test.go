package scheduler_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/scheduler"
)

func outputSchema(t *testing.T, schema string) facts.OutputSchema {
	t.Helper()
	raw := facts.RawJSON(schema)
	_, err := scheduler.CompileOutputSchema(raw)
	require.NoError(t, err)
	return facts.OutputSchema{Schema: raw, Digest: facts.SchemaDigest(raw)}
}

func TestCheckOutput(t *testing.T) {
	s := outputSchema(t, `{"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}}`)
	for _, tc := range []struct {
		name, answer string
		valid        bool
		says         string
	}{
		{"a valid document", ` {"ok": true} `, true, ""},
		{"one fenced block", "```json\n{\"ok\": false}\n```", true, ""},
		{"prose", "Sure! ok", false, "not one JSON document"},
		{"two documents", `{"ok": true} {"ok": true}`, false, "not one JSON document"},
		{"prose around a fence", "Here:\n```json\n{\"ok\": true}\n```", false, "not one JSON document"},
		{"a wrong type", `{"ok": "yes"}`, false, "at /properties/ok in the schema: type: "},
		{"missing", `{}`, false, "at / in the schema: required: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := scheduler.CheckOutput(s, 3, tc.answer)
			require.Equal(t, tc.valid, v.Valid, "%v", v.Errors)
			require.Equal(t, 3, v.Turn)
			require.Equal(t, s.Digest, v.Digest)
			d, err := facts.NewDraft(facts.KindOutputChecked, "", v)
			require.NoError(t, err, "the verdict is a fact that fits its kind")
			require.NotEmpty(t, d.Data)
			if tc.valid {
				require.NotEmpty(t, v.Output)
				return
			}
			require.Contains(t, strings.Join(v.Errors, "\n"), tc.says)
		})
	}
}

// A hostile answer gets bounded errors: at most facts.MaxOutputErrors, each
// at most facts.MaxOutputError bytes, and the same verdict every time. (The
// error is the first the library finds, in map order: with several, which
// one may differ from run to run; the verdict is recorded, and replay reads
// it, never checks again.)
func TestCheckOutputBounded(t *testing.T) {
	s := outputSchema(t, `{"type": "object", "additionalProperties": {"type": "integer"}}`)
	var ans strings.Builder
	ans.WriteString("{")
	for i := range 50 {
		if i > 0 {
			ans.WriteString(",")
		}
		key := fmt.Sprintf("k%d%s", i, strings.Repeat("é", 400))
		fmt.Fprintf(&ans, "%q: %q", key, strings.Repeat("x", 1000+i))
	}
	ans.WriteString("}")
	v := scheduler.CheckOutput(s, 1, ans.String())
	require.False(t, v.Valid)
	require.LessOrEqual(t, len(v.Errors), facts.MaxOutputErrors)
	for _, e := range v.Errors {
		require.LessOrEqual(t, len(e), facts.MaxOutputError)
	}
	again := scheduler.CheckOutput(s, 1, ans.String())
	require.Equal(t, v.Valid, again.Valid)
	require.Len(t, again.Errors, len(v.Errors))
	_, err := facts.NewDraft(facts.KindOutputChecked, "", v)
	require.NoError(t, err)
}

// A schema is compiled from itself alone: a $ref to a file or the network
// is not followed, so a check is the same wherever it runs.
func TestCompileOutputSchemaRefusesWhatIsNotASchema(t *testing.T) {
	for _, schema := range []string{
		`{"type": "objekt"}`,
		`{"type":`,
		`{"$ref": "file:///etc/passwd"}`,
		`{"$ref": "https://example.com/schema.json"}`,
	} {
		_, err := scheduler.CompileOutputSchema([]byte(schema))
		require.ErrorIs(t, err, scheduler.ErrOutputSchema, schema)
	}
}
