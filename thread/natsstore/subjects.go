package natsstore

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// The stream layout is documented in doc.go; these functions are its only
// writers and readers.

// layout names the subjects of one stream.
type layout struct{ prefix string }

func (l layout) encodeID(id string) string { return hex.EncodeToString([]byte(id)) }

// factSubject returns <prefix>.f.<hex id>.<seq>.
func (l layout) factSubject(id string, seq uint64) string {
	return l.prefix + ".f." + l.encodeID(id) + "." + strconv.FormatUint(seq, 10)
}

// factFilter returns <prefix>.f.<hex id>.*, every fact of id.
func (l layout) factFilter(id string) string {
	return l.prefix + ".f." + l.encodeID(id) + ".*"
}

// firstFacts returns <prefix>.f.*.1, one subject per thread.
func (l layout) firstFacts() string { return l.prefix + ".f.*.1" }

// causeSubject returns <prefix>.c.<hex id>.<hex sha256(cause)>.
func (l layout) causeSubject(id, cause string) string {
	d := sha256.Sum256([]byte(cause))
	return l.prefix + ".c." + l.encodeID(id) + "." + hex.EncodeToString(d[:])
}

// streamSubjects are the subjects the stream binds.
func (l layout) streamSubjects() []string {
	return []string{l.prefix + ".f.>", l.prefix + ".c.>"}
}

// parseFactSubject returns the id and seq of a fact subject.
func (l layout) parseFactSubject(subj string) (string, uint64, error) {
	rest, ok := strings.CutPrefix(subj, l.prefix+".f.")
	if !ok {
		return "", 0, fmt.Errorf("subject %q is not a fact subject", subj)
	}
	hexID, seqTok, ok := strings.Cut(rest, ".")
	if !ok {
		return "", 0, fmt.Errorf("fact subject %q has no seq", subj)
	}
	id, err := hex.DecodeString(hexID)
	if err != nil {
		return "", 0, fmt.Errorf("fact subject %q: thread id: %w", subj, err)
	}
	seq, err := strconv.ParseUint(seqTok, 10, 64)
	if err != nil || seq == 0 {
		return "", 0, fmt.Errorf("fact subject %q: seq %q is not a positive number", subj, seqTok)
	}
	return string(id), seq, nil
}

// markerVersion is the version of the cause marker layout (see doc.go).
const markerVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func encodeMarker(seq uint64, cause string) []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(cause)+4)
	b = append(b, markerVersion)
	b = binary.AppendUvarint(b, seq)
	b = append(b, cause...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// decodeMarker returns the seq a marker names and checks that it is the
// marker of cause.
func decodeMarker(b []byte, cause string) (uint64, error) {
	if len(b) < 1+1+4 {
		return 0, errors.New("cause marker is truncated")
	}
	body := b[:len(b)-4]
	if binary.LittleEndian.Uint32(b[len(b)-4:]) != crc32.Checksum(body, castagnoli) {
		return 0, errors.New("cause marker checksum mismatch")
	}
	if body[0] != markerVersion {
		return 0, fmt.Errorf("cause marker is version %d; this program reads version %d", body[0], markerVersion)
	}
	seq, n := binary.Uvarint(body[1:])
	if n <= 0 || seq == 0 {
		return 0, errors.New("cause marker has no seq")
	}
	if got := string(body[1+n:]); got != cause {
		return 0, fmt.Errorf("cause marker of %q is under the subject of %q", got, cause)
	}
	return seq, nil
}
