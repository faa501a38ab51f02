package facts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Errors of CheckJSON, tested with errors.Is.
var (
	// ErrMalformedJSON reports bytes that are not one well-formed JSON
	// document.
	ErrMalformedJSON = errors.New("malformed JSON")

	// ErrDuplicateKey reports a JSON object that names a key more than
	// once.
	ErrDuplicateKey = errors.New("duplicate key")
)

// CheckJSON reports whether raw is one well-formed JSON document in which
// no object names a key twice, at any depth. encoding/json accepts
// {"path": "a", "path": "b"} and keeps the last value, so a person shown
// such arguments may read one value while the other one runs: arguments a
// model wrote are checked with CheckJSON before anyone is asked about them
// or anything acts on them.
//
// Keys are compared after their escapes are decoded ("p\u0061th" is
// "path"). The error names the key and the object it is in, as a path from
// the document's root ($.a[2] is the third element of the root's "a"), and
// wraps ErrDuplicateKey; bytes that are not one JSON document (empty,
// malformed, trailing data, nested deeper than encoding/json reads) give an
// error that says where and wraps ErrMalformedJSON.
func CheckJSON(raw []byte) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return fmt.Errorf("%w: no document (the input is empty)", ErrMalformedJSON)
	}
	if !json.Valid(raw) {
		var v any
		err := json.Unmarshal(raw, &v) // fails before decoding anything: it validates first
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return fmt.Errorf("%w at byte %d: %s", ErrMalformedJSON, syn.Offset, strings.TrimPrefix(syn.Error(), "json: "))
		}
		if err == nil {
			err = errors.New("not a JSON document")
		}
		return fmt.Errorf("%w: %s", ErrMalformedJSON, strings.TrimPrefix(err.Error(), "json: "))
	}
	return checkKeys(raw)
}

// frame is one open object or array on the way down a document.
type frame struct {
	object bool
	keys   map[string]struct{} // an object's keys so far
	key    string              // the object's member being read
	index  int                 // the array's element being read
	want   bool                // an object expects a key next
}

// checkKeys walks a document known to be valid and refuses the first key
// an object names twice.
func checkKeys(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers are not converted, so none is out of range
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			// Only the end: the document is valid.
			return nil
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.want {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				endValue(stack)
				continue
			}
			key, _ := tok.(string) // a valid document has a string here
			if _, dup := top.keys[key]; dup {
				return fmt.Errorf("%w %q %s: an object names each key once", ErrDuplicateKey, key, where(stack[:len(stack)-1]))
			}
			top.keys[key] = struct{}{}
			top.key, top.want = key, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]struct{}{}, want: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			endValue(stack)
		default:
			endValue(stack)
		}
	}
}

// endValue moves the innermost open container past the value just read.
func endValue(stack []*frame) {
	if len(stack) == 0 {
		return
	}
	top := stack[len(stack)-1]
	if top.object {
		top.want = true
	} else {
		top.index++
	}
}

// where names, for an error, the object whose enclosing containers are
// outer: "in the top-level object", or "in the object at $.a[2]".
func where(outer []*frame) string {
	if len(outer) == 0 {
		return "in the top-level object"
	}
	var b strings.Builder
	b.WriteString("$")
	for _, f := range outer {
		if !f.object {
			fmt.Fprintf(&b, "[%d]", f.index)
			continue
		}
		if isIdent(f.key) {
			b.WriteString("." + f.key)
		} else {
			b.WriteString("[" + strconv.Quote(f.key) + "]")
		}
	}
	return "in the object at " + b.String()
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		case i > 0 && '0' <= r && r <= '9':
		default:
			return false
		}
	}
	return true
}
