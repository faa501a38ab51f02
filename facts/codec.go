package facts

import (
	"encoding/binary"
	"fmt"
	"time"
)

// FormatVersion is the version of the storage format Encode writes.
//
// Every version keeps the same frame: the first byte is the version and the
// last four bytes are the CRC-32C (Castagnoli) of every byte before them,
// little-endian. The checksum is tested before the version, so a flipped
// version byte reads as corruption, and only an intact record from a newer
// program reads as ErrVersion.
//
// Version 1, between the version byte and the checksum:
//
//	seq    uvarint
//	kind   uvarint length, then the bytes
//	cause  uvarint length, then the bytes
//	at     int64 big-endian, UTC Unix nanoseconds
//	prev   32 bytes
//	data   uvarint length, then the msgpack payload
//
// The thread id is not stored: a record lives under a key that names its
// thread, and whoever reads it passes the id to DecodeFact. The envelope is
// written by hand rather than as msgpack so reading it costs a few bounds
// checks; the payload stays raw bytes until Decode reads it.
const FormatVersion = 1

// Encode returns the storage encoding of f (see FormatVersion). It fails with
// ErrInvalid if f's seq, kind, cause or time could not be read back.
func Encode(f Fact) ([]byte, error) {
	return AppendEncode(make([]byte, 0, EncodedLen(f)), f)
}

// EncodedLen returns the length of f's storage encoding: what Encode
// returns, and AppendEncode appends, for a valid f.
func EncodedLen(f Fact) int {
	return 1 + uvarintLen(f.Seq) + uvarintLen(uint64(len(f.Kind))) + len(f.Kind) +
		uvarintLen(uint64(len(f.Cause))) + len(f.Cause) + 8 + len(f.Prev) +
		uvarintLen(uint64(len(f.Data))) + len(f.Data) + 4
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// AppendEncode appends the storage encoding of f to dst, as Encode returns
// it: with room for EncodedLen(f) more bytes, dst's array is written in
// place (a store encodes into its write batch that way).
func AppendEncode(dst []byte, f Fact) ([]byte, error) {
	if err := f.validateEnvelope(); err != nil {
		return nil, fmt.Errorf("encode %s seq %d: %w", f.Thread, f.Seq, err)
	}
	start := len(dst)
	b := append(dst, FormatVersion)
	b = binary.AppendUvarint(b, f.Seq)
	b = binary.AppendUvarint(b, uint64(len(f.Kind)))
	b = append(b, f.Kind...)
	b = binary.AppendUvarint(b, uint64(len(f.Cause)))
	b = append(b, f.Cause...)
	b = binary.BigEndian.AppendUint64(b, uint64(f.At.UnixNano()))
	b = append(b, f.Prev[:]...)
	b = binary.AppendUvarint(b, uint64(len(f.Data)))
	b = append(b, f.Data...)
	return binary.LittleEndian.AppendUint32(b, checksum(b[start:])), nil
}

// DecodeFact reads a fact of thread from its storage encoding. It reads the
// envelope only; Data keeps the payload bytes (copied, so b may be reused)
// until Decode reads them. Malformed bytes fail with ErrCorrupt, a record
// from a newer format with ErrVersion; DecodeFact never panics.
func DecodeFact(thread string, b []byte) (Fact, error) {
	return decodeFact(thread, b, false)
}

func decodeFact(thread string, b []byte, lend bool) (Fact, error) {
	if len(b) < 1+4 {
		return Fact{}, fmt.Errorf("%w: %d bytes is too short for a record", ErrCorrupt, len(b))
	}
	body := b[:len(b)-4]
	if want, got := binary.LittleEndian.Uint32(b[len(b)-4:]), checksum(body); want != got {
		return Fact{}, fmt.Errorf("%w: checksum mismatch (stored %08x, computed %08x)", ErrCorrupt, want, got)
	}
	if v := body[0]; v != FormatVersion {
		return Fact{}, fmt.Errorf("%w: record is version %d; this program reads version %d", ErrVersion, v, FormatVersion)
	}
	r := reader{b: body, i: 1}
	f := Fact{Thread: thread}
	f.Seq = r.uvarint("seq")
	kind, registered := internKind(r.bytes("kind"))
	f.Kind = kind
	f.Cause = string(r.bytes("cause"))
	f.At = time.Unix(0, int64(r.uint64("at"))).UTC()
	copy(f.Prev[:], r.fixed("prev", len(f.Prev)))
	if data := r.bytes("data"); len(data) > 0 {
		if lend {
			f.Data = data[:len(data):len(data)]
		} else {
			f.Data = append([]byte(nil), data...)
		}
	}
	if r.err != nil {
		return Fact{}, r.err
	}
	if r.i != len(body) {
		return Fact{}, fmt.Errorf("%w: %d bytes after the payload", ErrCorrupt, len(body)-r.i)
	}
	// A registered kind was validated when it was registered.
	if err := f.validateStored(registered); err != nil {
		return Fact{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return f, nil
}

// reader reads a record's fields, remembering the first error so the caller
// checks once.
type reader struct {
	b   []byte
	i   int
	err error
}

func (r *reader) fail(field string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated in %s at byte %d", ErrCorrupt, field, r.i)
	}
	r.i = len(r.b)
}

func (r *reader) uvarint(field string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 {
		r.fail(field)
		return 0
	}
	r.i += n
	return v
}

func (r *reader) fixed(field string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b)-r.i < n {
		r.fail(field)
		return nil
	}
	p := r.b[r.i : r.i+n]
	r.i += n
	return p
}

func (r *reader) uint64(field string) uint64 {
	p := r.fixed(field, 8)
	if p == nil {
		return 0
	}
	return binary.BigEndian.Uint64(p)
}

func (r *reader) bytes(field string) []byte {
	n := r.uvarint(field)
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)-r.i) {
		r.fail(field)
		return nil
	}
	return r.fixed(field, int(n))
}
