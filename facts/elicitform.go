package facts

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxElicitDefault bounds a string input's default, in bytes.
const MaxElicitDefault = 512

// MaxElicitFields bounds the inputs read of one form.
const MaxElicitFields = 64

// ElicitInput is one input of the form an MCP server asks for (a
// property of its requested schema), as harness reads it. Everything but
// Name's use as a key is the server's word.
type ElicitInput struct {
	Name        string
	Title       string
	Description string
	// Type is string, number, integer or boolean (anything else is read
	// as string).
	Type     string
	Required bool
	// Choices are the values of its enum, or of its oneOf consts.
	Choices []string
	// Default is the value the server offers (its "default", SEP-1034),
	// as text typed into the input would give it. Only a default of the
	// input's type is kept (one of its choices, for an input with some; a
	// string of at most MaxElicitDefault bytes with no control or
	// bidi-formatting characters); any other is "".
	Default string
}

// elicitSchema is what harness reads of a requested schema.
type elicitSchema struct {
	Properties map[string]struct {
		Type        string          `json:"type"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		Enum        []any           `json:"enum"`
		Default     json.RawMessage `json:"default"`
		OneOf       []struct {
			Const any `json:"const"`
		} `json:"oneOf"`
	} `json:"properties"`
	Required []string `json:"required"`
}

// ElicitInputs reads the inputs of the form schema asks for, in name
// order (at most MaxElicitFields). A schema that does not read gives
// none.
func ElicitInputs(schema RawJSON) []ElicitInput {
	var s elicitSchema
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var out []ElicitInput
	for name, p := range s.Properties {
		in := ElicitInput{Name: name, Title: p.Title, Description: p.Description, Type: p.Type,
			Required: slices.Contains(s.Required, name)}
		switch in.Type {
		case "string", "number", "integer", "boolean":
		default:
			// Not a type a form input has (or the server's words, which
			// reach a terminal): read it as text.
			in.Type = "string"
		}
		for _, v := range p.Enum {
			in.Choices = append(in.Choices, fmt.Sprint(v))
		}
		for _, o := range p.OneOf {
			in.Choices = append(in.Choices, fmt.Sprint(o.Const))
		}
		in.Default = in.defaultOf(p.Default)
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b ElicitInput) int { return strings.Compare(a.Name, b.Name) })
	if len(out) > MaxElicitFields {
		out = out[:MaxElicitFields]
	}
	return out
}

// defaultOf is the text of the default raw for the input, or "" when raw
// is none or not one the input takes.
func (in ElicitInput) defaultOf(raw json.RawMessage) string {
	if len(raw) == 0 || len(raw) > 4*MaxElicitDefault {
		return ""
	}
	var text string
	switch in.Type {
	case "string":
		if json.Unmarshal(raw, &text) != nil || len(text) > MaxElicitDefault || !plainText(text) {
			return ""
		}
	case "number":
		var n float64
		if json.Unmarshal(raw, &n) != nil {
			return ""
		}
		text = strconv.FormatFloat(n, 'g', -1, 64)
	case "integer":
		var n int64
		if json.Unmarshal(raw, &n) != nil {
			return ""
		}
		text = strconv.FormatInt(n, 10)
	case "boolean":
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return ""
		}
		text = strconv.FormatBool(b)
	}
	if text == "" || (len(in.Choices) > 0 && !slices.Contains(in.Choices, text)) {
		return ""
	}
	return text
}

// plainText says s is valid UTF-8 with no control or bidi-formatting
// characters: text that shows as itself on a terminal and in a form.
func plainText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || unicode.Is(unicode.Join_Control, r) {
			return false
		}
	}
	return true
}

// ElicitKeptDefaults is schema with the "default" of every property taken
// out that ElicitInputs does not keep (one not of the input's type, one
// of an input past MaxElicitFields, ...): a default nobody is shown is
// never filled into an answer. Keys are matched as a JSON decoder in Go
// matches them, whatever their case: a property with more than one
// default, or a schema with more than one object of properties, keeps no
// default at all. changed says whether one was taken out. A schema that
// is not a JSON object is returned as it is.
func ElicitKeptDefaults(schema RawJSON) (_ RawJSON, changed bool, _ error) {
	var top map[string]json.RawMessage
	if json.Unmarshal(schema, &top) != nil || top == nil {
		return schema, false, nil
	}
	var names []string
	for k := range top {
		if strings.EqualFold(k, "properties") {
			names = append(names, k)
		}
	}
	kept := map[string]bool{}
	if len(names) == 1 {
		for _, in := range ElicitInputs(schema) {
			kept[in.Name] = in.Default != ""
		}
	}
	for _, k := range names {
		var props map[string]json.RawMessage
		if json.Unmarshal(top[k], &props) != nil || props == nil {
			continue
		}
		cut := false
		for name, raw := range props {
			var p map[string]json.RawMessage
			if json.Unmarshal(raw, &p) != nil || p == nil {
				continue // not an object: no default to take
			}
			var defaults []string
			for key := range p {
				if strings.EqualFold(key, "default") {
					defaults = append(defaults, key)
				}
			}
			if len(defaults) == 0 || (len(defaults) == 1 && kept[name]) {
				continue
			}
			for _, key := range defaults {
				delete(p, key)
			}
			b, err := json.Marshal(p)
			if err != nil {
				return nil, false, err
			}
			props[name], cut = b, true
		}
		if cut {
			b, err := json.Marshal(props)
			if err != nil {
				return nil, false, err
			}
			top[k], changed = b, true
		}
	}
	if !changed {
		return schema, false, nil
	}
	out, err := json.Marshal(top)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}
