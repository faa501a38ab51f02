package scheduler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// A JSON Schema that harness checks documents against — a thread's output
// schema, the input an MCP server asks a person for — is read from itself
// alone and validated by github.com/google/jsonschema-go (draft 2020-12 and
// draft-07). That library compares numbers as float64 and does not assert
// "format"; so that its verdict is the one the JSON Schema specification
// gives (and the one github.com/santhosh-tekuri/jsonschema, used before,
// gave: see TestSchemaVerdictsAgree), what it would judge otherwise is
// refused with an error instead of judged:
//
//   - a schema of another draft (draft-04, draft-06, 2019-09, or a
//     meta-schema of its own);
//   - a draft-07 schema with "format" (draft-07 asserts it);
//   - a number in the schema that float64 does not hold exactly as written
//     (more than 17 significant digits, or beyond ±2^53), and a multipleOf
//     that is not a whole number;
//   - a number in a checked document with the same trouble, when the schema
//     has a keyword that compares numbers (minimum, maximum,
//     exclusiveMinimum, exclusiveMaximum, multipleOf, const, enum,
//     uniqueItems) or, for a number with a fraction, when it asks for an
//     integer.
//
// A $ref to anything outside the schema is never loaded.

// Schema drafts harness reads (the names google/jsonschema-go knows them
// by).
const (
	draft2020 = "https://json-schema.org/draft/2020-12/schema"
	draft07   = "http://json-schema.org/draft-07/schema#"
)

// schemaBase is the name a schema is read under: never fetched, like
// every name a $ref gives.
const schemaBase = "https://harness.invalid/schema.json"

// maxExact is the largest magnitude below which every integer is a
// float64: a number beyond it is not compared as written.
const maxExact = 1 << 53

// CompiledSchema is a JSON Schema ready to check documents against.
type CompiledSchema struct {
	resolved *jsonschema.Resolved
	// compares: the schema has a keyword that compares numbers, so a
	// document's number must be exactly a float64; integers: it asks for
	// an integer somewhere.
	compares, integers bool
}

// CompileSchema reads a JSON Schema from raw, or says why it cannot be
// one harness checks documents against (see the package's rules above:
// the errors wrap ErrSchemaDraft and ErrInexactNumber where those apply).
func CompileSchema(raw []byte) (*CompiledSchema, error) {
	doc, err := decodeOne(raw)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	draft := draft2020
	if obj, ok := doc.(map[string]any); ok {
		if v, ok := obj["$schema"]; ok {
			s, _ := v.(string)
			if draft, err = schemaDraft(s); err != nil {
				return nil, err
			}
		}
	}
	c := &CompiledSchema{}
	w := newSchemaWalk(draft, c)
	if err := w.schema(doc, "", w.root); err != nil {
		return nil, err
	}
	if err := w.loops(); err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %w", err)
	}
	if s.Schema != "" {
		s.Schema = draft // the one name the library knows the draft by
	}
	r, err := s.Resolve(&jsonschema.ResolveOptions{
		BaseURI: schemaBase,
		Loader: func(u *url.URL) (*jsonschema.Schema, error) {
			return nil, fmt.Errorf("%s: %w", u, ErrSchemaOutside)
		},
	})
	if err != nil {
		return nil, err
	}
	c.resolved = r
	return c, nil
}

// Validate checks one JSON document (text) against the schema.
func (c *CompiledSchema) Validate(text []byte) error {
	doc, err := decodeOne(text)
	if err != nil {
		return fmt.Errorf("not one JSON document: %w", err)
	}
	v, err := c.instance(doc, "")
	if err != nil {
		return err
	}
	if err := c.resolved.Validate(v); err != nil {
		return errors.New(invalidAt(err.Error()))
	}
	return nil
}

// invalidAt says where in the schema a document failed and why, from the
// library's "validating LOC: validating LOC: why".
func invalidAt(msg string) string {
	at := "/"
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		loc, why, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		if loc != "root" {
			at = loc
		}
		msg = why
	}
	return "at " + at + " in the schema: " + msg
}

// instance is the document as the library takes it: numbers as float64,
// each one checked to mean what it says (see CompiledSchema).
func (c *CompiledSchema) instance(v any, at string) (any, error) {
	switch x := v.(type) {
	case json.Number:
		n := readNumber(string(x))
		switch {
		case n.exact:
		case c.compares:
			return nil, fmt.Errorf("at %s: %w: %s, against a schema that compares numbers", pointer(at), ErrInexactNumber, shortNumber(string(x)))
		case c.integers && !n.integer:
			return nil, fmt.Errorf("at %s: %w: %s, against a schema that asks for integers", pointer(at), ErrInexactNumber, shortNumber(string(x)))
		}
		return n.f, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys) // the first error is the same every time
		for _, k := range keys {
			y, err := c.instance(x[k], at+"/"+escapePointer(k))
			if err != nil {
				return nil, err
			}
			x[k] = y
		}
	case []any:
		for i, e := range x {
			y, err := c.instance(e, at+"/"+strconv.Itoa(i))
			if err != nil {
				return nil, err
			}
			x[i] = y
		}
	}
	return v, nil
}

// schemaDraft is the draft a root "$schema" names, or why harness does
// not read it.
func schemaDraft(s string) (string, error) {
	u := strings.TrimSuffix(s, "#")
	u, ok := strings.CutPrefix(u, "https://")
	if !ok {
		u, _ = strings.CutPrefix(u, "http://")
	}
	switch u {
	case "json-schema.org/draft/2020-12/schema", "json-schema.org/schema":
		return draft2020, nil
	case "json-schema.org/draft-07/schema":
		return draft07, nil
	case "json-schema.org/draft/2019-09/schema":
		return "", fmt.Errorf("%w: draft 2019-09 (%q); write it as draft 2020-12 or draft-07", ErrSchemaDraft, s)
	case "json-schema.org/draft-06/schema":
		return "", fmt.Errorf("%w: draft-06 (%q); write it as draft 2020-12 or draft-07", ErrSchemaDraft, s)
	case "json-schema.org/draft-04/schema":
		return "", fmt.Errorf("%w: draft-04 (%q); write it as draft 2020-12 or draft-07", ErrSchemaDraft, s)
	}
	return "", fmt.Errorf("%w: $schema %q names no draft harness reads (draft 2020-12 or draft-07)", ErrSchemaDraft, short(s))
}

func isList(v any) bool   { _, ok := v.([]any); return ok }
func isObject(v any) bool { _, ok := v.(map[string]any); return ok }

// number is a JSON number as float64 reads it.
type number struct {
	f float64
	// exact: f is the number as written, to every digit, within ±2^53;
	// integer: the number as written has no fraction.
	exact, integer bool
}

// readNumber reads the JSON number s (as encoding/json has checked it).
func readNumber(s string) number {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// Out of range: beyond any float64 (the nearest is still
		// ordered the same against every number a schema holds).
		f = math.Copysign(math.MaxFloat64, f)
	}
	digits, exp, ok := decimal(s)
	n := number{f: f, integer: ok && (digits == "" || exp >= 0)}
	if !ok || err != nil || math.Abs(f) > maxExact {
		return n
	}
	d2, e2, _ := decimal(strconv.FormatFloat(f, 'g', -1, 64))
	n.exact = digits == d2 && exp == e2
	return n
}

// decimal is the JSON number s as digits × 10^exp, digits without leading
// or trailing zeros ("" for zero); not ok when exp would be absurd.
func decimal(s string) (digits string, exp int, ok bool) {
	s = strings.TrimPrefix(s, "-")
	mant, e, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		x, err := strconv.Atoi(e)
		if err != nil || x > 1e6 || x < -1e6 {
			return "", 0, false
		}
		exp = x
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits = whole + frac
	exp -= len(frac)
	n := len(digits)
	digits = strings.TrimRight(digits, "0")
	exp += n - len(digits)
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		exp = 0
	}
	return digits, exp, true
}

// decodeOne decodes exactly one JSON document, numbers as json.Number.
func decodeOne(text []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON document")
	}
	return v, nil
}

// pointer is a JSON pointer as errors show it.
func pointer(at string) string {
	if at == "" {
		return "/"
	}
	return at
}

func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// short cuts what a schema or document says to a length an error can
// quote.
func short(s string) string {
	if len(s) <= 40 {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:40]) + "…"
}

// shortNumber cuts a JSON number to a length an error can quote.
func shortNumber(s string) string {
	if len(s) <= 40 {
		return s
	}
	return s[:40] + "…"
}
