package facts

import (
	"encoding/binary"
	"time"
	"unsafe"
)

// Decoder reads the records of one log one after another, as a store's
// scan does, more cheaply than DecodeFact: each fact's Data is lent (a
// slice of the record's bytes, valid only for as long as they are), and
// the causes are copied into chunks shared by many facts instead of one
// allocation each. It checks what DecodeFact checks and fails as it does.
// The zero Decoder is ready to use; it is not safe for concurrent use.
type Decoder struct {
	// causes is the unused tail of the chunk causes are copied into.
	// Bytes handed out as a cause are never written again.
	causes []byte
	// kind and registered are the last kind read, which the next record
	// most likely shares.
	kind       Kind
	registered bool
}

// causeChunk is the size of the chunks a Decoder copies causes into: a
// cause kept after the scan keeps its chunk alive, so it stays small.
const causeChunk = 2 << 10

// Decode reads a fact of thread from its storage encoding b. Its Data is
// a slice of b: whoever keeps the fact after b may change must copy Data
// first. Its other fields are the fact's own.
func (d *Decoder) Decode(thread string, b []byte) (Fact, error) {
	var f Fact
	err := d.DecodeTo(&f, thread, b)
	return f, err
}

// DecodeTo is Decode writing the fact into *f, which a scan reading
// record after record keeps for all of them: a fact is some 140 bytes,
// which a return by value copies. On an error *f is the zero Fact.
func (d *Decoder) DecodeTo(f *Fact, thread string, b []byte) error {
	if !d.fast(f, thread, b) {
		// Something is off: the careful path names what.
		var err error
		*f, err = decodeFact(thread, b, true)
		return err
	}
	return nil
}

// fast decodes an intact record of the current format into *f, or
// reports false for anything else (which decodeFact then explains).
func (d *Decoder) fast(f *Fact, thread string, b []byte) bool {
	if len(b) < 1+4 {
		return false
	}
	// Summed first, then compared: the sum reads the record from its
	// start, and the stored sum after it is then already at hand.
	body := b[:len(b)-4]
	sum := checksum(body)
	if binary.LittleEndian.Uint32(b[len(b)-4:]) != sum || body[0] != FormatVersion {
		return false
	}
	seq, i, ok := uvarintAt(body, 1)
	if !ok {
		return false
	}
	kind, i, ok := bytesAt(body, i)
	if !ok {
		return false
	}
	cause, i, ok := bytesAt(body, i)
	if !ok || len(body)-i < 8+len(f.Prev) {
		return false
	}
	at := int64(binary.BigEndian.Uint64(body[i:]))
	prev := (*Hash)(body[i+8:])
	data, i, ok := bytesAt(body, i+8+len(f.Prev))
	if !ok || i != len(body) {
		return false
	}
	if string(kind) != string(d.kind) || d.kind == "" {
		d.kind, d.registered = internKind(kind)
	}
	// At was read from int64 nanoseconds, so it is in range; the rest
	// of the envelope is checked as DecodeFact checks it.
	if seq == 0 || (seq == 1) != prev.IsZero() || ValidateCause(unsafe.String(unsafe.SliceData(cause), len(cause))) != nil {
		return false
	}
	if !d.registered && d.kind.Validate() != nil {
		return false
	}
	f.Thread, f.Seq, f.Kind = thread, seq, d.kind
	f.Cause = d.keep(cause)
	f.At = time.Unix(0, at).UTC()
	f.Data = nil
	if len(data) > 0 {
		f.Data = data[:len(data):len(data)]
	}
	f.Prev = *prev
	return true
}

// keep returns a string holding a copy of cause, cut from the current
// chunk.
func (d *Decoder) keep(cause []byte) string {
	n := len(cause)
	if n == 0 {
		return ""
	}
	if n > len(d.causes) {
		if n > causeChunk/4 {
			return string(cause)
		}
		d.causes = make([]byte, causeChunk)
	}
	p := d.causes[:n:n]
	copy(p, cause)
	d.causes = d.causes[n:]
	return unsafe.String(unsafe.SliceData(p), n)
}

// uvarintAt reads a uvarint at b[i:], returning it and the index after.
func uvarintAt(b []byte, i int) (uint64, int, bool) {
	if i < len(b) && b[i] < 0x80 {
		return uint64(b[i]), i + 1, true
	}
	v, n := binary.Uvarint(b[i:])
	if n <= 0 {
		return 0, i, false
	}
	return v, i + n, true
}

// bytesAt reads a uvarint length and that many bytes at b[i:].
func bytesAt(b []byte, i int) ([]byte, int, bool) {
	n, i, ok := uvarintAt(b, i)
	if !ok || n > uint64(len(b)-i) {
		return nil, i, false
	}
	return b[i : i+int(n)], i + int(n), true
}
