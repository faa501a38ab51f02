package natsstore

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// An append is one record: one message on the thread's subject holding all
// the facts of the append (see "Records" in the package comment). These
// functions are the record format's only writers and readers.

// recordVersion is the version of the record format.
const recordVersion = 1

// The forms of a record.
const (
	formInline = 1 // the facts are in the record
	formStaged = 2 // the facts are in parts on the thread's stage subject
)

// part is one piece of a staged record's facts: the message at stream seq
// seq on the thread's stage subject, of size bytes whose SHA-256 is sum.
type part struct {
	seq  uint64
	size uint64
	sum  [sha256.Size]byte
}

// record is one decoded record.
type record struct {
	seq   uint64 // the stream seq of its message
	first uint64 // the seq of its first fact
	count uint64 // how many facts it holds, at least 1
	// The last fact's hash, kind and time: the thread's head after the
	// append, readable without the facts.
	hash  facts.Hash
	kind  facts.Kind
	at    time.Time
	form  byte
	body  []byte // formInline: the facts' frames
	parts []part // formStaged
}

// last returns the seq of the record's last fact.
func (r *record) last() uint64 { return r.first + r.count - 1 }

// head returns the head of id after the record.
func (r *record) head(id string) thread.Head {
	return thread.Head{Thread: id, Seq: r.last(), Hash: r.hash, Kind: r.kind, At: r.at}
}

// recordRoom is the most a record takes beside its facts (or parts): the
// fixed fields, a kind of the longest length, and the checksum.
const recordRoom = 2 + 2*binary.MaxVarintLen64 + len(facts.Hash{}) + binary.MaxVarintLen64 + facts.MaxKindLen + 8 + binary.MaxVarintLen64 + 4

// partRoom is the most one part's entry takes in a staged record.
const partRoom = 2*binary.MaxVarintLen64 + sha256.Size

// frames encodes the facts of an append of drafts after head at time at,
// each as a frame (uvarint length, then facts.Encode), and returns them
// with the head after the append and each cause's first seq in it.
func frames(id string, head thread.Head, drafts []facts.Draft, at time.Time) ([]byte, thread.Head, error) {
	var out []byte
	f := facts.Fact{Thread: id, Seq: head.Seq, Prev: head.Hash, At: at}
	for i, d := range drafts {
		f.Seq++
		f.Kind, f.Cause, f.Data = d.Kind, d.Cause, d.Data
		v, err := facts.Encode(f)
		if err != nil {
			return nil, thread.Head{}, fmt.Errorf("draft %d: %w", i, err)
		}
		out = binary.AppendUvarint(out, uint64(len(v)))
		out = append(out, v...)
		f.Prev = f.Hash()
	}
	return out, thread.Head{Thread: id, Seq: f.Seq, Hash: f.Prev, Kind: f.Kind, At: at}, nil
}

// encodeRecord returns the record of the facts first … next.Seq, whose
// frames are body (formInline, parts nil) or in parts (formStaged).
func encodeRecord(first uint64, next thread.Head, body []byte, parts []part) []byte {
	n := recordRoom + len(body) + len(parts)*partRoom
	b := make([]byte, 0, n)
	form := byte(formInline)
	if parts != nil {
		form = formStaged
	}
	b = append(b, recordVersion, form)
	b = binary.AppendUvarint(b, first)
	b = binary.AppendUvarint(b, next.Seq-first+1)
	b = append(b, next.Hash[:]...)
	b = binary.AppendUvarint(b, uint64(len(next.Kind)))
	b = append(b, next.Kind...)
	b = binary.BigEndian.AppendUint64(b, uint64(next.At.UnixNano()))
	if parts == nil {
		b = append(b, body...)
	} else {
		b = binary.AppendUvarint(b, uint64(len(parts)))
		for _, p := range parts {
			b = binary.AppendUvarint(b, p.seq)
			b = binary.AppendUvarint(b, p.size)
			b = append(b, p.sum[:]...)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// decodeRecord reads the record in data, the message at stream seq seq. It
// checks the frame and the fields, not the facts, which are read as they
// are needed (see readFacts).
func decodeRecord(seq uint64, data []byte) (*record, error) {
	if len(data) < 2+4 {
		return nil, fmt.Errorf("record at stream seq %d: %d bytes is too short", seq, len(data))
	}
	body := data[:len(data)-4]
	if want, got := binary.LittleEndian.Uint32(data[len(data)-4:]), crc32.Checksum(body, castagnoli); want != got {
		return nil, fmt.Errorf("record at stream seq %d: checksum mismatch (stored %08x, computed %08x)", seq, want, got)
	}
	if body[0] != recordVersion {
		return nil, fmt.Errorf("record at stream seq %d is version %d; this program reads version %d", seq, body[0], recordVersion)
	}
	r := &record{seq: seq, form: body[1]}
	in := body[2:]
	var err error
	next := func(what string) uint64 {
		v, n := binary.Uvarint(in)
		if n <= 0 && err == nil {
			err = fmt.Errorf("record at stream seq %d: bad %s", seq, what)
		}
		if n > 0 {
			in = in[n:]
		}
		return v
	}
	take := func(what string, n uint64) []byte {
		if uint64(len(in)) < n {
			if err == nil {
				err = fmt.Errorf("record at stream seq %d: truncated %s", seq, what)
			}
			return nil
		}
		v := in[:n]
		in = in[n:]
		return v
	}
	r.first = next("first seq")
	r.count = next("fact count")
	copy(r.hash[:], take("hash", uint64(len(r.hash))))
	r.kind = facts.Kind(take("kind", next("kind length")))
	if at := take("time", 8); at != nil {
		r.at = time.Unix(0, int64(binary.BigEndian.Uint64(at))).UTC()
	}
	switch r.form {
	case formInline:
		r.body = in
	case formStaged:
		n := next("part count")
		if err == nil && n > uint64(len(in))/(1+1+sha256.Size) {
			err = fmt.Errorf("record at stream seq %d: %d parts do not fit its %d bytes", seq, n, len(in))
		}
		for i := uint64(0); i < n && err == nil; i++ {
			p := part{seq: next("part seq"), size: next("part size")}
			copy(p.sum[:], take("part digest", sha256.Size))
			r.parts = append(r.parts, p)
		}
		if err == nil && len(in) != 0 {
			err = fmt.Errorf("record at stream seq %d: %d bytes after the parts", seq, len(in))
		}
	default:
		return nil, fmt.Errorf("record at stream seq %d: unknown form %d", seq, r.form)
	}
	switch {
	case err != nil:
		return nil, err
	case r.first == 0 || r.count == 0 || r.first+r.count-1 < r.first:
		return nil, fmt.Errorf("record at stream seq %d: facts %d and %d on are not a range of seqs", seq, r.first, r.count)
	case r.kind.Validate() != nil:
		return nil, fmt.Errorf("record at stream seq %d: last kind: %w", seq, r.kind.Validate())
	}
	return r, nil
}

// errFrame: the bytes of a record's facts do not split into frames.
var errFrame = errors.New("bad fact frame")

// nextFrame splits the first frame off b: it returns the frame's fact
// record, the rest, and false if b does not hold a whole frame yet.
func nextFrame(b []byte) (fact, rest []byte, ok bool, err error) {
	n, k := binary.Uvarint(b)
	switch {
	case k == 0 || (k < 0 && len(b) < binary.MaxVarintLen64):
		return nil, b, false, nil // the length is not all there
	case k < 0 || n > uint64(1<<40):
		return nil, nil, false, errFrame
	case uint64(len(b)-k) < n:
		return nil, b, false, nil
	}
	return b[k : k+int(n)], b[k+int(n):], true, nil
}
