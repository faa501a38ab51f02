package drive

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
)

// ElicitField is one input of the form an MCP server asked for (its
// requested schema's property), as a front end shows it. Everything but
// Name's use as a key is the server's word: escape it where shown.
type ElicitField struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is string, number, integer or boolean.
	Type     string   `json:"type"`
	Required bool     `json:"required,omitempty"`
	Enum     []string `json:"enum,omitempty"`
	// Secret says the field looks like a secret (facts.Elicit.Sensitive).
	Secret bool `json:"secret,omitempty"`
}

// MaxElicitFields bounds the fields a front end is given of one form.
const MaxElicitFields = 64

// ElicitFields reads the fields of the form e asks for, in name order (at
// most MaxElicitFields). A schema that does not read gives none.
func ElicitFields(e *facts.Elicit) []ElicitField {
	if e == nil {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Type        string `json:"type"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
			OneOf       []struct {
				Const any `json:"const"`
			} `json:"oneOf"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(e.Schema, &s) != nil {
		return nil
	}
	var out []ElicitField
	for name, p := range s.Properties {
		f := ElicitField{Name: name, Title: p.Title, Description: p.Description, Type: p.Type,
			Required: slices.Contains(s.Required, name), Secret: slices.Contains(e.Sensitive, name)}
		if f.Type == "" {
			f.Type = "string"
		}
		for _, v := range p.Enum {
			f.Enum = append(f.Enum, fmt.Sprint(v))
		}
		for _, o := range p.OneOf {
			f.Enum = append(f.Enum, fmt.Sprint(o.Const))
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b ElicitField) int { return strings.Compare(a.Name, b.Name) })
	if len(out) > MaxElicitFields {
		out = out[:MaxElicitFields]
	}
	return out
}

// elicitContent is the input a form's fields give, typed as the schema
// says: a number, an integer or a boolean ("true", "on", "yes", or
// false) from its text; an empty field is left out.
func elicitContent(e *facts.Elicit, fields map[string]string) (json.RawMessage, error) {
	types := map[string]string{}
	for _, f := range ElicitFields(e) {
		types[f.Name] = f.Type
	}
	out := map[string]any{}
	for name, v := range fields {
		t, ok := types[name]
		if !ok {
			return nil, fmt.Errorf("%w: the server's form has no field %q", ErrBadReply, name)
		}
		switch {
		case v == "" && t != "boolean":
			continue
		case t == "number":
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return nil, fmt.Errorf("%w: field %q wants a number, not %q", ErrBadReply, name, v)
			}
			out[name] = n
		case t == "integer":
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: field %q wants an integer, not %q", ErrBadReply, name, v)
			}
			out[name] = n
		case t == "boolean":
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "true", "on", "yes", "1":
				out[name] = true
			default:
				out[name] = false
			}
		default:
			out[name] = v
		}
	}
	return json.Marshal(out)
}
