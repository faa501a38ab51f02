package tools

import (
	"encoding/json"
)

// prop is one property of a tool's arguments.
type prop map[string]any

// objectSchema is the JSON Schema of a tool's arguments: an object with
// these properties, the required ones, and no others. Maps marshal with
// sorted keys, so a schema's bytes are the same on every run (they are
// recorded in system.configured).
func objectSchema(props map[string]prop, required ...string) json.RawMessage {
	s := map[string]any{
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	}
	if len(required) > 0 {
		s["required"] = required
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(err) // plain maps of strings and numbers always marshal
	}
	return raw
}
