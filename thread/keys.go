package thread

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
)

// The key schema is documented in doc.go; these functions are its only
// writers and readers.

const (
	tableCause = 'c'
	tableFact  = 'f'
	tableHead  = 'h'
	tableMeta  = 'm'
	// sep ends a thread id inside a key. ValidateID never admits it, so
	// one thread's keys are never a prefix of another's.
	sep = 0x00
)

// schemaKey holds the version of this key schema; schemaVersion is the one
// this code reads and writes.
var schemaKey = []byte{tableMeta, 's', 'c', 'h', 'e', 'm', 'a'}

const schemaVersion = 1

// factPrefix returns 'f' id 0x00, the prefix of every fact key of id.
func factPrefix(id string) []byte {
	k := make([]byte, 0, 2+len(id)+8)
	k = append(k, tableFact)
	k = append(k, id...)
	return append(k, sep)
}

// factKey returns 'f' id 0x00 seq, with seq big-endian so keys sort by seq.
func factKey(id string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(factPrefix(id), seq)
}

// factKeyLen is the length of a fact key of id.
func factKeyLen(id string) int { return 2 + len(id) + 8 }

// putFactKey writes factKey(id, seq) into dst, factKeyLen(id) bytes.
func putFactKey(dst []byte, id string, seq uint64) {
	dst[0] = tableFact
	n := 1 + copy(dst[1:], id)
	dst[n] = sep
	binary.BigEndian.PutUint64(dst[n+1:], seq)
}

// putCauseKey writes causeKey(id, cause) into dst, 2+len(id)+len(cause)
// bytes.
func putCauseKey(dst []byte, id, cause string) {
	dst[0] = tableCause
	n := 1 + copy(dst[1:], id)
	dst[n] = sep
	copy(dst[n+1:], cause)
}

// putHeadKey writes headKey(id) into dst, 1+len(id) bytes.
func putHeadKey(dst []byte, id string) {
	dst[0] = tableHead
	copy(dst[1:], id)
}

// factUpper returns the exclusive upper bound of id's fact keys.
func factUpper(id string) []byte {
	k := factPrefix(id)
	k[len(k)-1] = sep + 1
	return k
}

// factSeq returns the seq of a fact key of id, or false if key is not one.
func factSeq(id string, key []byte) (uint64, bool) {
	if len(key) != 2+len(id)+8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(key[len(key)-8:]), true
}

// headKey returns 'h' id.
func headKey(id string) []byte {
	k := make([]byte, 0, 1+len(id))
	k = append(k, tableHead)
	return append(k, id...)
}

// causePrefix returns 'c' id 0x00, the prefix of id's cause index keys.
func causePrefix(id string) []byte {
	k := make([]byte, 0, 2+len(id)+32)
	k = append(k, tableCause)
	k = append(k, id...)
	return append(k, sep)
}

// causeKey returns 'c' id 0x00 cause.
func causeKey(id, cause string) []byte {
	return append(causePrefix(id), cause...)
}

// encodeSeq and decodeSeq are the cause index's value: 8 bytes big-endian.
func encodeSeq(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

func decodeSeq(b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("cause index value is %d bytes, want 8", len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

// headVersion is the version of the head record layout:
//
//	version  1 byte
//	seq      uvarint
//	hash     32 bytes
//	kind     uvarint length, then the bytes
//	at       int64 big-endian, UTC Unix nanoseconds
//	crc      4 bytes, CRC-32C (Castagnoli) of the bytes before, little-endian
const headVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func encodeHead(h Head) []byte {
	return appendHead(make([]byte, 0, headLen(h)), h)
}

// headLen is the length of h's record.
func headLen(h Head) int {
	return 1 + uvarintLen(h.Seq) + len(h.Hash) + uvarintLen(uint64(len(h.Kind))) + len(h.Kind) + 8 + 4
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// appendHead appends h's record to dst: in place, when dst has room for
// headLen(h) more bytes.
func appendHead(dst []byte, h Head) []byte {
	start := len(dst)
	b := append(dst, headVersion)
	b = binary.AppendUvarint(b, h.Seq)
	b = append(b, h.Hash[:]...)
	b = binary.AppendUvarint(b, uint64(len(h.Kind)))
	b = append(b, h.Kind...)
	b = binary.BigEndian.AppendUint64(b, uint64(h.At.UnixNano()))
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

var errShortHead = errors.New("head record is truncated")

func decodeHead(id string, b []byte) (Head, error) {
	if len(b) < 1+4 {
		return Head{}, errShortHead
	}
	body := b[:len(b)-4]
	if binary.LittleEndian.Uint32(b[len(b)-4:]) != crc32.Checksum(body, castagnoli) {
		return Head{}, errors.New("head record checksum mismatch")
	}
	if body[0] != headVersion {
		return Head{}, fmt.Errorf("head record is version %d; this program reads version %d", body[0], headVersion)
	}
	h := Head{Thread: id}
	i := 1
	seq, n := binary.Uvarint(body[i:])
	if n <= 0 {
		return Head{}, errShortHead
	}
	h.Seq, i = seq, i+n
	if len(body)-i < len(h.Hash) {
		return Head{}, errShortHead
	}
	i += copy(h.Hash[:], body[i:])
	kl, n := binary.Uvarint(body[i:])
	if n <= 0 || kl > uint64(len(body)-i-n) {
		return Head{}, errShortHead
	}
	i += n
	h.Kind = facts.Kind(body[i : i+int(kl)])
	i += int(kl)
	if len(body)-i != 8 {
		return Head{}, errShortHead
	}
	h.At = time.Unix(0, int64(binary.BigEndian.Uint64(body[i:]))).UTC()
	if h.Seq == 0 {
		return Head{}, errors.New("head record has seq 0")
	}
	return h, nil
}
