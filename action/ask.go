package action

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Ask says whether an action asks a person before it runs. Its zero
// value, AskDefault, goes by the capability: an action that writes or
// executes asks, one that reads does not. In JSON it is null (or absent)
// for AskDefault, true for AskAlways and false for AskNever; the names
// "default", "always" and "never" are read too.
type Ask int8

// The ways an action asks.
const (
	// AskDefault asks for Write and Execute actions, not for Read ones.
	AskDefault Ask = iota
	// AskAlways asks a person before every call.
	AskAlways
	// AskNever runs every call without asking.
	AskNever
)

// Asks reports whether an action needing c asks a person first. A value
// that is none of the three asks: an unknown word never lets a call past
// a person.
func (a Ask) Asks(c Capability) bool {
	switch a {
	case AskDefault:
		return c != Read
	case AskNever:
		return false
	}
	return true
}

// Validate accepts AskDefault, AskAlways and AskNever.
func (a Ask) Validate() error {
	switch a {
	case AskDefault, AskAlways, AskNever:
		return nil
	}
	return fmt.Errorf("ask %d: want AskDefault, AskAlways or AskNever", int8(a))
}

// String is "default", "always" or "never".
func (a Ask) String() string {
	switch a {
	case AskDefault:
		return "default"
	case AskAlways:
		return "always"
	case AskNever:
		return "never"
	}
	return fmt.Sprintf("Ask(%d)", int8(a))
}

// MarshalJSON is null, true or false.
func (a Ask) MarshalJSON() ([]byte, error) {
	switch a {
	case AskDefault:
		return []byte("null"), nil
	case AskAlways:
		return []byte("true"), nil
	case AskNever:
		return []byte("false"), nil
	}
	return nil, a.Validate()
}

// UnmarshalJSON reads null, true or false (as a *bool would), or
// "default", "always" or "never".
func (a *Ask) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "null", `"default"`:
		*a = AskDefault
	case "true", `"always"`:
		*a = AskAlways
	case "false", `"never"`:
		*a = AskNever
	default:
		var s string
		if json.Unmarshal(b, &s) == nil {
			return fmt.Errorf("ask %q: want true, false or null (or always, never, default)", s)
		}
		return fmt.Errorf("ask %s: want true, false or null (or always, never, default)", bytes.TrimSpace(b))
	}
	return nil
}
