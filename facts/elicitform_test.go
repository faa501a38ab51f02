package facts_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// Only the defaults ElicitInputs keeps (those a person is shown) stay in
// a requested schema; every other goes, however a hostile server spells
// or hides it.
func TestElicitKeptDefaults(t *testing.T) {
	many := map[string]any{}
	for i := range facts.MaxElicitFields {
		many[fmt.Sprintf("a%02d", i)] = map[string]any{"type": "string", "default": "shown"}
	}
	many["zz"] = map[string]any{"type": "string", "default": "past the fields shown"}
	manyRaw, err := json.Marshal(map[string]any{"type": "object", "properties": many})
	require.NoError(t, err)

	for _, tc := range []struct {
		name, schema string
		want         map[string]string // property: its default after ("" none)
	}{
		{"kept", `{"type":"object","properties":{"ttl":{"type":"integer","default":300},"name":{"type":"string","default":"Ana"},"ok":{"type":"boolean","default":true},"c":{"type":"string","enum":["a","b"],"default":"b"}}}`,
			map[string]string{"ttl": "300", "name": `"Ana"`, "ok": "true", "c": `"b"`}},
		{"a control character", `{"properties":{"x":{"type":"string","default":"\u001b]0;pwned\u0007"}}}`, map[string]string{"x": ""}},
		{"a bidi override", `{"properties":{"x":{"type":"string","default":"abc\u202edef"}}}`, map[string]string{"x": ""}},
		{"too long", `{"properties":{"x":{"type":"string","default":"` + strings.Repeat("x", facts.MaxElicitDefault+1) + `"}}}`, map[string]string{"x": ""}},
		{"the wrong type", `{"properties":{"x":{"type":"integer","default":"300"},"y":{"type":"boolean","default":1},"z":{"type":"string","default":{"a":1}}}}`,
			map[string]string{"x": "", "y": "", "z": ""}},
		{"not a choice", `{"properties":{"x":{"type":"string","enum":["a"],"default":"b"},"y":{"type":"string","oneOf":[{"const":"a"}],"default":"b"}}}`,
			map[string]string{"x": "", "y": ""}},
		{"a fraction for an integer", `{"properties":{"x":{"type":"integer","default":1.5}}}`, map[string]string{"x": ""}},
		{"spelled in capitals", `{"properties":{"x":{"type":"string","DEFAULT":"\u0007"},"y":{"type":"string","Default":"fine"}}}`,
			map[string]string{"x": "", "y": `"fine"`}},
		{"two defaults", `{"properties":{"x":{"type":"string","default":"shown","Default":"sent"}}}`, map[string]string{"x": ""}},
		{"two objects of properties", `{"properties":{"x":{"type":"string","default":"a"}},"Properties":{"x":{"type":"string","default":"b"}}}`, map[string]string{"x": ""}},
		{"a property that is no object", `{"properties":{"t":true,"x":{"type":"string","default":"\u0000"}}}`, map[string]string{"x": ""}},
		{"an unknown type", `{"properties":{"x":{"type":"array","default":["a"]}}}`, map[string]string{"x": ""}},
		{"past the fields shown", string(manyRaw), map[string]string{"zz": "", "a00": `"shown"`, "a63": `"shown"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, changed, err := facts.ElicitKeptDefaults(facts.RawJSON(tc.schema))
			require.NoError(t, err)
			got := defaultsOf(t, out)
			cut := false
			for prop, want := range tc.want {
				require.Equal(t, want, got[prop], "%s: %s", prop, out)
				cut = cut || want == ""
			}
			require.Equal(t, cut, changed)
		})
	}

	// Not a schema with properties: as it is.
	for _, s := range []string{`null`, `[]`, `"x"`, `{}`, `{"properties":[1]}`, `not json`} {
		out, changed, err := facts.ElicitKeptDefaults(facts.RawJSON(s))
		require.NoError(t, err)
		require.False(t, changed, s)
		require.Equal(t, s, string(out))
	}
}

// defaultsOf is each property's default in schema (every spelling of
// "properties" and "default"), "" for none.
func defaultsOf(t *testing.T, schema facts.RawJSON) map[string]string {
	t.Helper()
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(schema, &top), string(schema))
	got := map[string]string{}
	for key, raw := range top {
		if !strings.EqualFold(key, "properties") {
			continue
		}
		var props map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(raw, &props))
		for name, p := range props {
			var m map[string]json.RawMessage
			if json.Unmarshal(p, &m) != nil {
				continue
			}
			for k, v := range m {
				if strings.EqualFold(k, "default") {
					got[name] += string(v)
				}
			}
		}
	}
	return got
}
