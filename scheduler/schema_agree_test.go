package scheduler_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	old "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/scheduler"
)

// The validator harness used before (santhosh-tekuri/jsonschema, a full
// draft 2020-12 validator whose package init compiled every draft's
// meta-schema: three quarters of harness's start-up) is kept as a test
// dependency only, to say that the one now used gives the same verdicts.

// oldVerdict is the old validator's verdict, compiled as CheckElicited and
// CompileOutputSchema compiled before: draft 2020-12 by default, no
// loader. compiled says the schema compiled.
func oldVerdict(schema, doc string) (compiled, valid bool) {
	sd, err := old.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		return false, false
	}
	c := old.NewCompiler()
	c.DefaultDraft(old.Draft2020)
	c.UseLoader(refuseAll{})
	if err := c.AddResource("harness:schema.json", sd); err != nil {
		return false, false
	}
	s, err := c.Compile("harness:schema.json")
	if err != nil {
		return false, false
	}
	d, err := old.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		return true, false
	}
	return true, s.Validate(d) == nil
}

type refuseAll struct{}

func (refuseAll) Load(url string) (any, error) { return nil, fmt.Errorf("%s: not loaded", url) }

// newVerdict is harness's verdict now: refused says it would not judge
// (the schema, or a number of the document, is one it refuses).
func newVerdict(t *testing.T, schema, doc string) (refused, valid bool, err error) {
	s, err := scheduler.CompileSchema([]byte(schema))
	if err != nil {
		return true, false, err
	}
	err = s.Validate([]byte(doc))
	if errors.Is(err, scheduler.ErrInexactNumber) {
		return true, false, err
	}
	return false, err == nil, err
}

// A table of schemas (elicitations as MCP servers send them, output
// schemas, hostile ones) and documents: where harness judges, it gives the
// old verdict; where it does not (refused), the case says so, and the
// old validator's verdict is what it is.
func TestSchemaVerdictsAgree(t *testing.T) {
	type tc struct {
		schema  string
		docs    []string
		refused bool // harness refuses the schema (or these documents)
	}
	elicitation := `{"type":"object","required":["name"],"properties":{"name":{"type":"string","title":"Name","minLength":1,"maxLength":5},` +
		`"age":{"type":"integer","minimum":0,"maximum":150},"color":{"type":"string","enum":["red","blue"]},` +
		`"ok":{"type":"boolean","default":false},"email":{"type":"string","format":"email"},"score":{"type":"number","exclusiveMinimum":0.1,"maximum":0.3}}}`
	cases := []tc{
		{schema: elicitation, docs: []string{`{"name":"Ana"}`, `{}`, `{"name":""}`, `{"name":"Anastasia"}`, `{"name":"ééééé"}`, `{"name":"éééééé"}`,
			`{"name":"A","age":-1}`, `{"name":"A","age":150}`, `{"name":"A","age":150.0}`, `{"name":"A","age":1.5}`, `{"name":"A","age":1e2}`,
			`{"name":"A","color":"green"}`, `{"name":"A","color":"red"}`, `{"name":"A","ok":"yes"}`, `{"name":"A","email":"not an email"}`,
			`{"name":"A","score":0.1}`, `{"name":"A","score":0.10000000000000002}`, `{"name":"A","score":0.3}`, `{"name":"A","score":0.30000000000000004}`,
			`{"name":"A","score":3e-1}`, `{"name":"A","extra":[1,2,{"x":null}]}`, `{"name":3}`, `[]`, `"Ana"`, `null`}},
		{schema: `{"type":"object","required":["ok"],"properties":{"ok":{"type":"boolean"}}}`, docs: []string{`{"ok":true}`, `{"ok":"yes"}`, `{}`, `{"ok":false,"x":1}`}},
		{schema: `{"type":"object","additionalProperties":{"type":"integer"}}`, docs: []string{`{"a":1,"b":2.0}`, `{"a":1,"b":2.5}`, `{}`, `{"a":"x"}`}},
		{schema: `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, docs: []string{`{"a":"x"}`, `{"a":"x","b":1}`}},
		{schema: `{"type":"object","properties":{"a":{"type":"string"}},"unevaluatedProperties":false,"allOf":[{"properties":{"b":{"type":"integer"}}}]}`,
			docs: []string{`{"a":"x","b":1}`, `{"a":"x","c":1}`, `{"b":"x"}`}},
		{schema: `{"oneOf":[{"type":"integer"},{"type":"number","minimum":2}]}`, docs: []string{`1`, `2`, `2.5`, `"x"`}},
		{schema: `{"anyOf":[{"type":"string","pattern":"^[a-z]+$"},{"type":"null"}],"not":{"const":"no"}}`, docs: []string{`"abc"`, `"ABC"`, `null`, `"no"`, `1`}},
		{schema: `{"if":{"properties":{"kind":{"const":"a"}}},"then":{"required":["a"]},"else":{"required":["b"]}}`, docs: []string{`{"kind":"a","a":1}`, `{"kind":"a"}`, `{"b":1}`, `{}`}},
		{schema: `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false,"minItems":1}`, docs: []string{`["a",1]`, `["a",1,2]`, `[]`, `[1]`}},
		{schema: `{"type":"array","contains":{"type":"integer"},"minContains":2,"maxContains":3,"uniqueItems":true}`, docs: []string{`[1,2]`, `[1,"a"]`, `[1,1]`, `[1,1.0,"a"]`, `[1,2,3,4]`, `[{"a":1},{"a":1.0}]`}},
		{schema: `{"propertyNames":{"maxLength":3},"minProperties":1,"maxProperties":2}`, docs: []string{`{"abc":1}`, `{"abcd":1}`, `{}`, `{"a":1,"b":2,"c":3}`, `"x"`}},
		{schema: `{"dependentRequired":{"a":["b"]},"dependentSchemas":{"c":{"required":["d"]}}}`, docs: []string{`{"a":1,"b":1}`, `{"a":1}`, `{"c":1}`, `{"c":1,"d":1}`}},
		{schema: `{"$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"},"v":{"type":"integer"}}}},"$ref":"#/$defs/node"}`,
			docs: []string{`{"v":1,"next":{"v":2,"next":{}}}`, `{"v":1,"next":{"v":"x"}}`}},
		{schema: `{"$id":"https://example.invalid/root.json","$defs":{"s":{"$anchor":"str","type":"string"}},"properties":{"a":{"$ref":"#str"},"b":{"$ref":"https://example.invalid/root.json#/$defs/s"}}}`,
			docs: []string{`{"a":"x","b":"y"}`, `{"a":1}`, `{"b":1}`}},
		{schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"integer","const":3}`, docs: []string{`3`, `3.0`, `4`}},
		{schema: `{"enum":[1,"1",null,{"a":[1]}]}`, docs: []string{`1`, `1.0`, `"1"`, `null`, `{"a":[1.0]}`, `{"a":[2]}`, `true`}},
		{schema: `{"type":"integer","multipleOf":3,"maximum":9007199254740992}`, docs: []string{`9`, `9.0`, `10`, `-3`, `0`, `9007199254740991`, `9007199254740992`}},
		{schema: `{"type":"number","minimum":-1.5,"exclusiveMaximum":1e3}`, docs: []string{`-1.5`, `-1.5000000000000002`, `999.9999999999999`, `1000`, `1e3`, `0.1e4`}},
		{schema: `{"format":"date-time","type":"string"}`, docs: []string{`"yesterday"`, `"2026-12-03T07:00:00Z"`}},
		{schema: `{"type":["string","null"],"maxLength":2}`, docs: []string{`"ab"`, `"abc"`, `null`, `1`}},
		{schema: `true`, docs: []string{`1`, `{}`}},
		{schema: `false`, docs: []string{`1`, `{}`}},
		{schema: `{}`, docs: []string{`12345678901234567890`, `1e400`, `-1e-400`, `0.1000000000000000000001`}},
		{schema: `{"type":"integer"}`, docs: []string{`12345678901234567890`, `1e400`, `9007199254740993`}},
		{schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"string"},"t":{"items":[{"type":"integer"}],"additionalItems":false}},` +
			`"definitions":{"n":{"type":"number"}},"additionalProperties":{"$ref":"#/definitions/n"},"dependencies":{"a":["b"]}}`,
			docs: []string{`{"a":"x","b":1}`, `{"a":"x"}`, `{"t":[1]}`, `{"t":[1,2]}`, `{"c":"x"}`, `{"c":2}`}},
		{schema: `{"$schema":"http://json-schema.org/draft-07/schema","$ref":"#/definitions/s","definitions":{"s":{"type":"string"}},"type":"integer"}`, docs: []string{`"x"`, `1`}},

		// Refused: another draft, or what this validator would judge
		// otherwise.
		{schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"string","format":"email"}`, docs: []string{`"a@b.example"`, `"nope"`}, refused: true},
		{schema: `{"$schema":"http://json-schema.org/draft-04/schema#","type":"number","maximum":1,"exclusiveMaximum":true}`, docs: []string{`1`, `0`}, refused: true},
		{schema: `{"$schema":"http://json-schema.org/draft-06/schema#","type":"number"}`, docs: []string{`1`}, refused: true},
		{schema: `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"number"}`, docs: []string{`1`}, refused: true},
		{schema: `{"$schema":"https://example.invalid/my-meta","type":"number"}`, docs: []string{`1`}, refused: true},
		{schema: `{"type":"number","multipleOf":0.01}`, docs: []string{`19.99`, `0.3`, `0.001`}, refused: true},
		{schema: `{"type":"number","multipleOf":0.1}`, docs: []string{`0.3`}, refused: true},
		{schema: `{"type":"integer","maximum":9007199254740993}`, docs: []string{`9007199254740993`, `9007199254740994`}, refused: true},
		{schema: `{"type":"number","maximum":1e400}`, docs: []string{`1`}, refused: true},
		{schema: `{"const":0.1000000000000000055511151231257827021181583404541015625}`, docs: []string{`0.1`}, refused: true},
		{schema: `{"type":"integer","maximum":9007199254740992}`, docs: []string{`9007199254740993`, `1e300`, `0.1000000000000000000001`}, refused: true},
		{schema: `{"type":"integer","multipleOf":7}`, docs: []string{`1e300`, `12345678901234567890`}, refused: true},
		{schema: `{"type":"integer"}`, docs: []string{`9007199254740993.5`, `1e-400`}, refused: true},
		{schema: `{"enum":[1]}`, docs: []string{`1.0000000000000000000001`}, refused: true},
		{schema: `{"$ref":"#"}`, docs: []string{`1`}, refused: true},
		{schema: `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`, docs: []string{`1`}, refused: true},
		{schema: `{"$id":"https://example.invalid/x","anyOf":[{"not":{"$ref":"https://example.invalid/x"}}]}`, docs: []string{`1`}, refused: true},
		{schema: `{"$dynamicAnchor":"d","oneOf":[{"$dynamicRef":"#d"}]}`, docs: []string{`1`}, refused: true},
		{schema: `{"$ref":"file:///etc/passwd"}`, docs: []string{`1`}, refused: true},
		{schema: `{"$ref":"https://example.invalid/s.json"}`, docs: []string{`1`}, refused: true},
		{schema: `{"type":"objekt"}`, docs: []string{`{}`}, refused: true},
		{schema: `{"type":["string","string"]}`, docs: []string{`"a"`}, refused: true},
		{schema: `{"minLength":-1}`, docs: []string{`"a"`}, refused: true},
		{schema: `{"minLength":1.5}`, docs: []string{`"a"`}, refused: true},
		{schema: `{"required":"x"}`, docs: []string{`{}`}, refused: true},
		{schema: `{"required":["x","x"]}`, docs: []string{`{}`}, refused: true},
		{schema: `{"multipleOf":0}`, docs: []string{`1`}, refused: true},
		{schema: `{"multipleOf":-2}`, docs: []string{`4`}, refused: true},
		{schema: `{"allOf":[]}`, docs: []string{`1`}, refused: true},
		{schema: `{"items":[{"type":"string"}]}`, docs: []string{`[1]`}, refused: true},
		{schema: `{"$anchor":"1bad"}`, docs: []string{`1`}, refused: true},
		{schema: `{"pattern":"(a)\\1"}`, docs: []string{`"aa"`}, refused: true},
		{schema: `{"properties":{"a":5}}`, docs: []string{`{"a":1}`}, refused: true},
		{schema: `{"type":"object"} {"type":"string"}`, docs: []string{`{}`}, refused: true},
		{schema: `[]`, docs: []string{`1`}, refused: true},
	}
	for i, c := range cases {
		for _, doc := range c.docs {
			name := fmt.Sprintf("%d %.60s | %.40s", i, c.schema, doc)
			oc, ov := oldVerdict(c.schema, doc)
			refused, nv, err := newVerdict(t, c.schema, doc)
			if c.refused {
				require.True(t, refused, "%s: harness judges it (valid %v, %v); the old validator: compiled %v, valid %v", name, nv, err, oc, ov)
				require.True(t, errors.Is(err, scheduler.ErrSchemaDraft) || errors.Is(err, scheduler.ErrInexactNumber) ||
					errors.Is(err, scheduler.ErrSchemaShape) || errors.Is(err, scheduler.ErrSchemaOutside) || err != nil, "%s: %v", name, err)
				continue
			}
			require.False(t, refused, "%s: refused: %v", name, err)
			require.True(t, oc, "%s: the old validator did not compile it", name)
			require.Equal(t, ov, nv, "%s: old valid %v, new %v (%v)", name, ov, nv, err)
		}
	}
}

// Numbers, at random: bounds and whole multiples of numbers as JSON
// writes them, against documents of every shape a number takes: harness
// judges exactly as the old validator did, or refuses.
func TestSchemaNumberVerdictsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 1))
	num := func() string {
		switch r.IntN(7) {
		case 0:
			return strconv.Itoa(r.IntN(200) - 100)
		case 1:
			return strconv.FormatFloat(float64(r.IntN(2000)-1000)/100, 'f', -1, 64)
		case 2:
			return strconv.FormatFloat(r.Float64()*10-5, 'g', -1, 64)
		case 3:
			return fmt.Sprintf("%de%d", r.IntN(20)-10, r.IntN(6)-3)
		case 4:
			return strconv.FormatInt(1<<53-int64(r.IntN(3)), 10)
		case 5:
			return strconv.FormatFloat(float64(r.IntN(10))/10, 'f', -1, 64) + strings.Repeat("0", r.IntN(3))
		default:
			return fmt.Sprintf("%d.%d", r.IntN(10), r.IntN(1000))
		}
	}
	kw := []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
	judged, refused := 0, 0
	for range 3000 {
		var parts []string
		if r.IntN(3) == 0 {
			parts = append(parts, `"type":"integer"`)
		}
		for _, k := range kw {
			if r.IntN(2) == 0 {
				parts = append(parts, fmt.Sprintf("%q:%s", k, num()))
			}
		}
		if r.IntN(3) == 0 {
			parts = append(parts, fmt.Sprintf(`"multipleOf":%d`, r.IntN(12)+1))
		}
		if r.IntN(4) == 0 {
			parts = append(parts, fmt.Sprintf(`"enum":[%s,%s]`, num(), num()))
		}
		schema := "{" + strings.Join(parts, ",") + "}"
		doc := num()
		oc, ov := oldVerdict(schema, doc)
		ref, nv, err := newVerdict(t, schema, doc)
		if ref {
			refused++
			continue
		}
		judged++
		require.True(t, oc, "%s: the old validator did not compile it", schema)
		require.Equal(t, ov, nv, "%s against %s: old %v, new %v (%v)", schema, doc, ov, nv, err)
	}
	t.Logf("judged %d, refused %d", judged, refused)
	require.Greater(t, judged, 2000)
}

// A schema's references are never loaded: a $ref or $schema naming a
// server harness could reach is refused without a request to it.
func TestSchemaRefsAreNeverFetched(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()
	for _, schema := range []string{
		`{"$ref":"` + srv.URL + `/s.json"}`,
		`{"properties":{"a":{"$ref":"` + srv.URL + `/s.json#/x"}}}`,
		`{"$id":"` + srv.URL + `/root.json","$ref":"other.json"}`,
		`{"$schema":"` + srv.URL + `/meta.json"}`,
		`{"$dynamicRef":"` + srv.URL + `/s.json#d"}`,
	} {
		_, err := scheduler.CompileSchema([]byte(schema))
		require.Error(t, err, schema)
	}
	s, err := scheduler.CompileSchema([]byte(`{"$id":"` + srv.URL + `/root.json","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"` + srv.URL + `/root.json#/$defs/s"}}}`))
	require.NoError(t, err, "a reference to the schema itself, by its $id")
	require.NoError(t, s.Validate([]byte(`{"a":"x"}`)))
	require.Error(t, s.Validate([]byte(`{"a":1}`)))
	require.Zero(t, hits.Load(), "nothing was fetched")
}
