package facts

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// RawJSON is a JSON document inside a payload, such as a tool's input schema
// or an action's arguments. People see it as JSON, not as an escaped string.
//
// It is stored in one canonical form, compact and with <, >, & and U+2028/9
// escaped inside strings, so that a JSON export reproduces its bytes however
// the exporting encoder escapes. Storing anything but valid JSON is an
// error; empty and JSON null are both "no document" and are left out.
type RawJSON []byte

// IsZero reports whether r holds no document: empty or JSON null.
func (r RawJSON) IsZero() bool {
	return len(r) == 0 || string(bytes.TrimSpace(r)) == "null"
}

// canonical returns r in its stored form.
func (r RawJSON) canonical() ([]byte, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, r); err != nil {
		return nil, fmt.Errorf("raw JSON: %w", err)
	}
	var escaped bytes.Buffer
	json.HTMLEscape(&escaped, compact.Bytes())
	return escaped.Bytes(), nil
}

// EncodeMsgpack stores r in canonical form as msgpack bin.
func (r RawJSON) EncodeMsgpack(enc *msgpack.Encoder) error {
	if r.IsZero() {
		return enc.EncodeNil()
	}
	c, err := r.canonical()
	if err != nil {
		return err
	}
	return enc.EncodeBytes(c)
}

// DecodeMsgpack reads the stored bytes as they are.
func (r *RawJSON) DecodeMsgpack(dec *msgpack.Decoder) error {
	b, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	*r = b
	return nil
}

// MarshalJSON returns the document itself, or null.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// UnmarshalJSON keeps a copy of the document; null becomes empty.
func (r *RawJSON) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*r = nil
		return nil
	}
	*r = append((*r)[:0], b...)
	return nil
}
