package facts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"reflect"
	"strings"
	"time"
)

// The people's codec is JSON Lines: one fact per line, as an object with the
// fields thread, seq, kind, cause, at (RFC 3339, UTC), data (the payload as
// JSON), prev and hash (64 hex digits each; the hash is recomputed and must
// match).
//
// data alone reproduces the stored payload whenever it can: every payload
// this program's NewDraft builds, unless it holds text that is not valid
// UTF-8 (a command's binary output, say). When it cannot, the line carries
// the exact payload bytes as well, base64 in data_msgpack, and data (if the
// payload can be shown at all) is for reading: a parser requires the two to
// agree. Either way, writing then parsing reproduces the fact exactly, hash
// included.

// jsonFact is the line as written.
type jsonFact struct {
	Thread      string          `json:"thread"`
	Seq         uint64          `json:"seq"`
	Kind        Kind            `json:"kind"`
	Cause       string          `json:"cause"`
	At          time.Time       `json:"at"`
	Data        json.RawMessage `json:"data,omitempty"`
	DataMsgpack *[]byte         `json:"data_msgpack,omitempty"`
	Prev        Hash            `json:"prev"`
	Hash        Hash            `json:"hash"`
}

// jsonFactIn is the line as read; pointers tell a missing field from a zero
// one.
type jsonFactIn struct {
	Thread      *string         `json:"thread"`
	Seq         *uint64         `json:"seq"`
	Kind        *Kind           `json:"kind"`
	Cause       *string         `json:"cause"`
	At          json.RawMessage `json:"at"`
	Data        json.RawMessage `json:"data"`
	DataMsgpack *[]byte         `json:"data_msgpack"`
	Prev        json.RawMessage `json:"prev"`
	Hash        json.RawMessage `json:"hash"`
}

// MarshalJSON encodes f as the JSON object of one JSON Lines line.
func (f Fact) MarshalJSON() ([]byte, error) {
	if err := f.validateEnvelope(); err != nil {
		return nil, fmt.Errorf("json %s seq %d: %w", f.Thread, f.Seq, err)
	}
	out := jsonFact{
		Thread: f.Thread, Seq: f.Seq, Kind: f.Kind, Cause: f.Cause, At: f.At.UTC(),
		Prev: f.Prev, Hash: f.Hash(),
	}
	exact := false
	if data, err := payloadToJSON(f.Kind, f.Data); err == nil {
		out.Data = data
		back, err := payloadFromJSON(f.Kind, data)
		exact = err == nil && bytes.Equal(back, f.Data)
	}
	if !exact {
		raw := f.Data
		if raw == nil {
			raw = []byte{}
		}
		out.DataMsgpack = &raw
	}
	return marshalJSON(out)
}

// UnmarshalJSON parses one fact as MarshalJSON writes it, with the checks
// ParseJSON makes.
func (f *Fact) UnmarshalJSON(b []byte) error {
	g, err := parseFact(b)
	if err != nil {
		return err
	}
	*f = g
	return nil
}

// WriteJSON writes facts as JSON Lines to w.
func WriteJSON(w io.Writer, facts ...Fact) error {
	bw := bufio.NewWriter(w)
	for _, f := range facts {
		if err := writeLine(bw, f); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteJSONSeq writes the facts of seq as JSON Lines to w, as they come, and
// stops at the first error. Use it to export a thread read from a store.
func WriteJSONSeq(w io.Writer, seq iter.Seq2[Fact, error]) error {
	bw := bufio.NewWriter(w)
	for f, err := range seq {
		if err != nil {
			return err
		}
		if err := writeLine(bw, f); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func writeLine(w *bufio.Writer, f Fact) error {
	line, err := f.MarshalJSON()
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if _, err := w.Write(line); err != nil {
		return fmt.Errorf("write %s seq %d: %w", f.Thread, f.Seq, err)
	}
	return nil
}

// MaxLineLen bounds a line ParseJSON reads: a 64 MiB payload, base64-encoded,
// fits.
const MaxLineLen = 96 << 20

// ParseError is a line of JSON Lines input that is not a fact. Err says what
// is wrong and wraps ErrInvalid, ErrPayload or ErrHashMismatch where one
// applies.
type ParseError struct {
	// Line is the 1-based line number.
	Line int
	// Err is what is wrong with the line.
	Err error
}

// Error returns "line N: what is wrong".
func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns Err.
func (e *ParseError) Unwrap() error { return e.Err }

// ParseJSON reads JSON Lines from r, one fact per line, and returns the facts
// in order. Blank lines are skipped. The first line that is not a fact (a log
// line, a truncated object, a missing or malformed field, a payload that does
// not fit its kind, a hash that does not match) stops it with a *ParseError
// naming the line.
func ParseJSON(r io.Reader) ([]Fact, error) {
	var out []Fact
	for f, err := range ScanJSON(r) {
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// ScanJSON is ParseJSON as an iterator: it yields each fact as its line is
// read, so memory does not grow with the input, and ends after the first
// error.
func ScanJSON(r io.Reader) iter.Seq2[Fact, error] {
	return func(yield func(Fact, error) bool) {
		br := bufio.NewReaderSize(r, 64<<10)
		var line []byte
		for n := 1; ; n++ {
			var err error
			line, err = readLine(br, line[:0])
			if err == io.EOF && len(line) == 0 {
				return
			}
			if err != nil && err != io.EOF {
				yield(Fact{}, &ParseError{Line: n, Err: err})
				return
			}
			if len(bytes.TrimSpace(line)) == 0 {
				if err == io.EOF {
					return
				}
				continue
			}
			f, perr := parseFact(line)
			if perr != nil {
				yield(Fact{}, &ParseError{Line: n, Err: perr})
				return
			}
			if !yield(f, nil) || err == io.EOF {
				return
			}
		}
	}
}

var errLongLine = fmt.Errorf("line is longer than %d bytes", MaxLineLen)

// readLine appends the next line of br to buf, without its line ending. It
// returns io.EOF with the last line if that line has no newline.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxLineLen+2 {
			return buf, errLongLine
		}
		buf = append(buf, chunk...)
		switch err {
		case nil:
			buf = bytes.TrimSuffix(buf[:len(buf)-1], []byte("\r"))
			return buf, nil
		case bufio.ErrBufferFull:
			continue
		default:
			return buf, err
		}
	}
}

// parseFact parses one JSON object as a fact, with every check ParseJSON
// promises.
func parseFact(line []byte) (Fact, error) {
	if firstByte(line) != '{' {
		return Fact{}, fmt.Errorf("%w: not a JSON object: %q", ErrInvalid, abbreviate(line))
	}
	var in jsonFactIn
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return Fact{}, fmt.Errorf("%w: %s: want %s, have a JSON %s", ErrInvalid, typeErr.Field, typeErr.Type, typeErr.Value)
		}
		if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field") {
			return Fact{}, fmt.Errorf("%w: %s", ErrInvalid, strings.TrimPrefix(msg, "json: "))
		}
		return Fact{}, fmt.Errorf("%w: malformed JSON: %v", ErrInvalid, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Fact{}, fmt.Errorf("%w: text after the JSON object", ErrInvalid)
	}
	var missing []string
	for _, m := range []struct {
		name    string
		present bool
	}{
		{"thread", in.Thread != nil}, {"seq", in.Seq != nil}, {"kind", in.Kind != nil},
		{"cause", in.Cause != nil}, {"at", in.At != nil}, {"prev", in.Prev != nil},
		{"hash", in.Hash != nil}, {"data", in.Data != nil || in.DataMsgpack != nil},
	} {
		if !m.present {
			missing = append(missing, m.name)
		}
	}
	if len(missing) > 0 {
		return Fact{}, fmt.Errorf("%w: missing %q", ErrInvalid, missing)
	}
	f := Fact{Thread: *in.Thread, Seq: *in.Seq, Kind: *in.Kind, Cause: *in.Cause}
	var at time.Time
	if err := json.Unmarshal(in.At, &at); err != nil {
		return Fact{}, fmt.Errorf("%w: at: want an RFC 3339 time: %v", ErrInvalid, err)
	}
	f.At = at.UTC()
	var hash Hash
	for _, h := range []struct {
		name string
		raw  json.RawMessage
		dst  *Hash
	}{{"prev", in.Prev, &f.Prev}, {"hash", in.Hash, &hash}} {
		if err := json.Unmarshal(h.raw, h.dst); err != nil {
			return Fact{}, fmt.Errorf("%w: %s: %v", ErrInvalid, h.name, err)
		}
	}
	if f.Thread == "" {
		return Fact{}, fmt.Errorf("%w: empty thread", ErrInvalid)
	}
	if err := f.validateEnvelope(); err != nil {
		return Fact{}, err
	}
	data, err := parseData(f.Kind, in.Data, in.DataMsgpack)
	if err != nil {
		return Fact{}, fmt.Errorf("data: %w", err)
	}
	f.Data = data
	if h := f.Hash(); h != hash {
		return Fact{}, fmt.Errorf("%w: line says %s, fact hashes to %s", ErrHashMismatch, hash, h)
	}
	return f, nil
}

// parseData returns the payload bytes a line carries: data_msgpack if
// present (then data, if present, must show the same payload), else data
// encoded for its kind.
func parseData(kind Kind, data json.RawMessage, exact *[]byte) ([]byte, error) {
	if exact == nil {
		return payloadFromJSON(kind, data)
	}
	b := *exact
	if len(b) == 0 {
		b = nil
	}
	if err := CheckPayload(kind, b); err != nil {
		return nil, err
	}
	if data != nil {
		shown, err := payloadToJSON(kind, b)
		if err != nil || !sameJSON(shown, data) {
			return nil, fmt.Errorf("%w: data does not show the payload in data_msgpack", ErrPayload)
		}
	}
	return b, nil
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b []byte) bool {
	var va, vb any
	if !decodeNumbers(a, &va) || !decodeNumbers(b, &vb) {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

func decodeNumbers(b []byte, v *any) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v) == nil
}

func abbreviate(b []byte) string {
	const n = 60
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// Collect reads a sequence of facts (a thread's log as a store reads it,
// an export as ScanJSON reads it) into a slice, never nil: the facts read
// before the first error, and that error.
func Collect(log iter.Seq2[Fact, error]) ([]Fact, error) {
	out := []Fact{}
	for f, err := range log {
		if err != nil {
			return out, err
		}
		out = append(out, f)
	}
	return out, nil
}
