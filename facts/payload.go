package facts

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// maxDepth bounds how deeply an unregistered kind's payload may nest, so a
// hostile payload cannot exhaust the stack of a recursive decoder.
const maxDepth = 64

// encodePayload encodes payload for kind; see NewDraft.
func encodePayload(kind Kind, payload any) ([]byte, error) {
	if e := lookup(kind); e != nil {
		return e.encode(payload)
	}
	if payload == nil {
		return nil, nil
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: unregistered kind %s: payload is not a JSON value: %v", ErrPayload, kind, err)
	}
	return canonicalFromJSON(raw)
}

// CheckPayload reports whether data fits kind: for a registered kind, one
// msgpack map that decodes into the kind's type with no unknown field and no
// wrong type and passes its Validate method; for an unregistered kind, no
// bytes or one well-formed msgpack value. Stores call it before appending.
func CheckPayload(kind Kind, data []byte) error {
	if e := lookup(kind); e != nil {
		return e.check(data)
	}
	if len(data) == 0 {
		return nil
	}
	if err := wellFormed(data); err != nil {
		return fmt.Errorf("%w: %v", ErrPayload, err)
	}
	return nil
}

// decodeInto decodes data of kind into v, a non-nil pointer to typ.
func decodeInto[T any](kind Kind, data []byte, v *T) error {
	if e := lookup(kind); e != nil {
		if t := reflect.TypeFor[T](); t != e.typ {
			return fmt.Errorf("%w: kind %s carries %s, not %s", ErrPayload, kind, e.typ, t)
		}
		if len(data) == 0 {
			return fmt.Errorf("%w: empty payload, want %s", ErrPayload, e.typ)
		}
	} else {
		if len(data) == 0 {
			return nil
		}
		if err := wellFormed(data); err != nil {
			return fmt.Errorf("%w: %v", ErrPayload, err)
		}
	}
	if err := unmarshalPayload(data, v, false); err != nil {
		return fmt.Errorf("%w: %v", ErrPayload, err)
	}
	return nil
}

// payloadToJSON renders data of kind as one JSON value.
func payloadToJSON(kind Kind, data []byte) ([]byte, error) {
	if e := lookup(kind); e != nil {
		return e.toJSON(data)
	}
	if len(data) == 0 {
		return []byte("null"), nil
	}
	if err := wellFormed(data); err != nil {
		return nil, err
	}
	var v any
	if err := unmarshalPayload(data, &v, false); err != nil {
		return nil, err
	}
	return marshalJSON(v)
}

// payloadFromJSON encodes the JSON value raw as the payload of kind, checking
// that it fits.
func payloadFromJSON(kind Kind, raw []byte) ([]byte, error) {
	if e := lookup(kind); e != nil {
		return e.fromJSON(raw)
	}
	return canonicalFromJSON(raw)
}

// canonicalFromJSON encodes the JSON value raw as canonical msgpack (see
// Register). JSON null becomes no bytes.
func canonicalFromJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPayload, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: more than one JSON value", ErrPayload)
	}
	v, err := normalizeJSON(v, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPayload, err)
	}
	if v == nil {
		return nil, nil
	}
	return marshalPayload(v)
}

// normalizeJSON turns json.Numbers into int64, uint64 or float64 (the first
// that holds the number exactly) and checks the nesting depth.
func normalizeJSON(v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	switch v := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i, nil
		}
		if u, err := strconv.ParseUint(string(v), 10, 64); err == nil {
			return u, nil
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return nil, fmt.Errorf("number %s: %v", v, err)
		}
		return f, nil
	case []any:
		for i := range v {
			n, err := normalizeJSON(v[i], depth+1)
			if err != nil {
				return nil, err
			}
			v[i] = n
		}
	case map[string]any:
		for k := range v {
			n, err := normalizeJSON(v[k], depth+1)
			if err != nil {
				return nil, err
			}
			v[k] = n
		}
	}
	return v, nil
}

type payloadEncoder struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
}

var encoders = sync.Pool{New: func() any {
	e := &payloadEncoder{}
	e.enc = msgpack.NewEncoder(&e.buf)
	return e
}}

// marshalPayload encodes v the one way payloads are encoded: structs as maps
// in field order, empty fields left out, map keys sorted, integers compact.
func marshalPayload(v any) ([]byte, error) {
	e := encoders.Get().(*payloadEncoder)
	e.buf.Reset()
	e.enc.Reset(&e.buf)
	e.enc.SetOmitEmpty(true)
	e.enc.SetSortMapKeys(true)
	e.enc.UseCompactInts(true)
	err := e.enc.Encode(v)
	out := bytes.Clone(e.buf.Bytes())
	if e.buf.Cap() <= 64<<10 {
		encoders.Put(e)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPayload, err)
	}
	return out, nil
}

type payloadDecoder struct {
	rd  bytes.Reader
	dec *msgpack.Decoder
}

var decoders = sync.Pool{New: func() any {
	return &payloadDecoder{dec: msgpack.NewDecoder(nil)}
}}

// unmarshalPayload decodes exactly one msgpack value from data into v.
// strict refuses fields v's type does not have.
func unmarshalPayload(data []byte, v any, strict bool) error {
	d := decoders.Get().(*payloadDecoder)
	d.rd.Reset(data)
	d.dec.Reset(&d.rd)
	d.dec.DisallowUnknownFields(strict)
	err := d.dec.Decode(v)
	rest := d.rd.Len()
	d.rd.Reset(nil)
	d.dec.Reset(nil)
	decoders.Put(d)
	if err != nil {
		return err
	}
	if rest != 0 {
		return fmt.Errorf("%d bytes after the payload", rest)
	}
	return nil
}

// marshalJSON encodes v without HTML escaping and without a newline.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// unmarshalJSONStrict decodes exactly one JSON value into v, refusing
// unknown fields.
func unmarshalJSONStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}

func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

func isMapCode(c byte) bool { return c&0xf0 == 0x80 || c == 0xde || c == 0xdf }

var errTruncated = errors.New("msgpack value is truncated")

// wellFormed reports whether data is exactly one msgpack value, nested at
// most maxDepth deep. It reads no further than len(data) and allocates
// nothing that grows with the input, whatever lengths the bytes claim.
func wellFormed(data []byte) error {
	var stack [maxDepth + 1]uint64 // values still to read in each open container
	depth := 0
	stack[0] = 1
	i := 0
	for {
		for depth >= 0 && stack[depth] == 0 {
			depth--
		}
		if depth < 0 {
			break
		}
		stack[depth]--
		if i >= len(data) {
			return errTruncated
		}
		c := data[i]
		i++
		var skip, children uint64
		var err error
		switch {
		case c <= 0x7f || c >= 0xe0: // positive and negative fixint
		case c <= 0x8f: // fixmap
			children = 2 * uint64(c&0x0f)
		case c <= 0x9f: // fixarray
			children = uint64(c & 0x0f)
		case c <= 0xbf: // fixstr
			skip = uint64(c & 0x1f)
		default:
			switch c {
			case 0xc0, 0xc2, 0xc3: // nil, false, true
			case 0xc1:
				return fmt.Errorf("msgpack code 0xc1 at byte %d is never used", i-1)
			case 0xc4, 0xd9: // bin8, str8
				skip, i, err = readLen(data, i, 1)
			case 0xc5, 0xda: // bin16, str16
				skip, i, err = readLen(data, i, 2)
			case 0xc6, 0xdb: // bin32, str32
				skip, i, err = readLen(data, i, 4)
			case 0xc7: // ext8
				skip, i, err = readLen(data, i, 1)
				skip++
			case 0xc8: // ext16
				skip, i, err = readLen(data, i, 2)
				skip++
			case 0xc9: // ext32
				skip, i, err = readLen(data, i, 4)
				skip++
			case 0xca, 0xce, 0xd2: // float32, uint32, int32
				skip = 4
			case 0xcb, 0xcf, 0xd3: // float64, uint64, int64
				skip = 8
			case 0xcc, 0xd0: // uint8, int8
				skip = 1
			case 0xcd, 0xd1: // uint16, int16
				skip = 2
			case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16
				skip = 1 + 1<<(c-0xd4)
			case 0xdc: // array16
				children, i, err = readLen(data, i, 2)
			case 0xdd: // array32
				children, i, err = readLen(data, i, 4)
			case 0xde: // map16
				children, i, err = readLen(data, i, 2)
				children *= 2
			case 0xdf: // map32
				children, i, err = readLen(data, i, 4)
				children *= 2
			}
		}
		if err != nil {
			return err
		}
		if skip > uint64(len(data)-i) {
			return errTruncated
		}
		i += int(skip)
		if children > 0 {
			// Every value takes at least one byte, so a claim of more
			// values than bytes left is truncated already.
			if children > uint64(len(data)-i) {
				return errTruncated
			}
			if depth == maxDepth {
				return fmt.Errorf("msgpack value nested deeper than %d", maxDepth)
			}
			depth++
			stack[depth] = children
		}
	}
	if i != len(data) {
		return fmt.Errorf("%d bytes after the msgpack value", len(data)-i)
	}
	return nil
}

// readLen reads an n-byte big-endian length at data[i:].
func readLen(data []byte, i, n int) (uint64, int, error) {
	if len(data)-i < n {
		return 0, i, errTruncated
	}
	var l uint64
	switch n {
	case 1:
		l = uint64(data[i])
	case 2:
		l = uint64(binary.BigEndian.Uint16(data[i:]))
	case 4:
		l = uint64(binary.BigEndian.Uint32(data[i:]))
	}
	return l, i + n, nil
}
