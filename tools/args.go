package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
)

// decodeArgs decodes a call's JSON arguments into v, a pointer to a struct
// whose json tags are the schema's properties. It is strict where
// encoding/json is lenient, because a model's mistake should come back to
// it named, and because a person asked about a call must see what runs:
// the arguments must be one JSON object that names no key twice, at any
// depth (encoding/json would keep the last of two "path"s; see
// [facts.CheckJSON]); every key must be a field of v, spelled exactly
// (encoding/json alone would accept "PATH" for "path"); every required
// field must be present and not null. Errors wrap ErrInvalidArgs and name
// the field.
func decodeArgs(raw json.RawMessage, v any, required ...string) error {
	if err := checkObject(raw, jsonFields(v), required); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidArgs, jsonProblem(err))
	}
	return nil
}

// checkObject checks what decodeArgs checks before it decodes: raw is one
// JSON object with no key named twice, whose keys are all in known and
// which holds every required key, not null.
func checkObject(raw json.RawMessage, known, required []string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return fmt.Errorf("%w: no arguments; want a JSON object", ErrInvalidArgs)
	}
	if err := facts.CheckJSON(raw); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidArgs, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidArgs, jsonProblem(err))
	}
	if fields == nil {
		return fmt.Errorf("%w: got null; want a JSON object", ErrInvalidArgs)
	}
	var unknown []string
	for k := range fields {
		if !slices.Contains(known, k) {
			unknown = append(unknown, fmt.Sprintf("%q", k))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		noun := "field"
		if len(unknown) > 1 {
			noun = "fields"
		}
		return fmt.Errorf("%w: unknown %s %s (the fields are %s)", ErrInvalidArgs, noun, strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	var missing []string
	for _, k := range required {
		if f, ok := fields[k]; !ok || string(f) == "null" {
			missing = append(missing, fmt.Sprintf("%q", k))
		}
	}
	if len(missing) > 0 {
		noun := "field"
		if len(missing) > 1 {
			noun = "fields"
		}
		return fmt.Errorf("%w: missing required %s %s", ErrInvalidArgs, noun, strings.Join(missing, ", "))
	}
	return nil
}

// schemaFields returns the properties and the required properties of an
// object schema made by objectSchema, properties sorted.
func schemaFields(schema json.RawMessage) (known, required []string) {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		panic(err) // objectSchema's output always decodes
	}
	for k := range s.Properties {
		known = append(known, k)
	}
	slices.Sort(known)
	return known, s.Required
}

// jsonProblem says what is wrong with a document in a model's terms.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("malformed JSON at byte %d: %s", syn.Offset, strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Sprintf("got a JSON %s; want a JSON object", typ.Value)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %q: got %s, want %s", typ.Field, typ.Value, jsonType(typ.Type))
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonType names a Go type as a JSON Schema type.
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return "object"
}

// jsonFields returns the JSON names of the fields of the struct v points
// to, in declaration order.
func jsonFields(v any) []string {
	t := reflect.TypeOf(v).Elem()
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}
