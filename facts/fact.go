package facts

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kind names what a fact records, such as "confirmation.answered". A kind is
// 1 to 128 bytes of ASCII letters, digits, '.', '_', '-' and '/'.
type Kind string

// MaxKindLen and MaxCauseLen bound the envelope strings, so a malformed input
// is refused early instead of becoming a large key.
const (
	MaxKindLen  = 128
	MaxCauseLen = 1024
)

// Validate reports whether k follows the rules for a kind.
func (k Kind) Validate() error {
	if k == "" {
		return fmt.Errorf("%w: missing kind", ErrInvalid)
	}
	if len(k) > MaxKindLen {
		return fmt.Errorf("%w: kind is %d bytes, longer than %d", ErrInvalid, len(k), MaxKindLen)
	}
	for i := 0; i < len(k); i++ {
		if !kindByte(k[i]) {
			return fmt.Errorf("%w: kind %q: byte %q at %d is not allowed (letters, digits, '.', '_', '-', '/')", ErrInvalid, string(k), k[i], i)
		}
	}
	return nil
}

func kindByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '.' || c == '_' || c == '-' || c == '/'
}

// ValidateCause reports whether cause may be a fact's cause: 1 to MaxCauseLen
// bytes of valid UTF-8 without control characters. A cause is the key of the
// transition that appended the fact, or IngressCause(key) for a fact posted
// from outside.
func ValidateCause(cause string) error {
	if cause == "" {
		return fmt.Errorf("%w: missing cause", ErrInvalid)
	}
	if len(cause) > MaxCauseLen {
		return fmt.Errorf("%w: cause is %d bytes, longer than %d", ErrInvalid, len(cause), MaxCauseLen)
	}
	if printableASCII(cause) {
		return nil // the common case: valid UTF-8 without a control character
	}
	if !utf8.ValidString(cause) {
		return fmt.Errorf("%w: cause %q is not valid UTF-8", ErrInvalid, cause)
	}
	for i, r := range cause {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: cause %q: control character at byte %d", ErrInvalid, cause, i)
		}
	}
	return nil
}

// printableASCII reports whether every byte of s is printable ASCII
// (0x20 to 0x7e): such a string is valid UTF-8, and its only runes are
// ones unicode.IsControl rejects none of.
func printableASCII(s string) bool {
	// Eight bytes at a time: a byte with its high bit set, or one that
	// borrows when 0x20 is taken from it, or carries into its high bit
	// when 1 is added (0x7f), marks the word. A byte the one before it
	// made borrow or carry may be marked too, only when that one is
	// already outside the range, so a marked word is never a printable one.
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; len(s)-i >= 8; i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if (w|(w-0x20*ones)|(w+ones))&highs != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// ingressPrefix starts the cause of every fact posted from outside.
const ingressPrefix = "ingress/"

// IngressCause returns the cause of a fact posted from outside the runtime (a
// user message, an answer, a reconciliation) under the caller's idempotency
// key: "ingress/" + key. Posting twice with the same key appends once.
func IngressCause(key string) string { return ingressPrefix + key }

// IsIngress reports whether cause names an ingress fact rather than a
// transition.
func IsIngress(cause string) bool { return strings.HasPrefix(cause, ingressPrefix) }

// Hash is the SHA-256 of a fact's canonical byte layout (see Fact.Hash). The
// zero Hash is the Prev of a thread's first fact.
type Hash [32]byte

// String returns the hash as 64 lowercase hex digits.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is the zero hash.
func (h Hash) IsZero() bool { return h == Hash{} }

// MarshalText encodes h as 64 lowercase hex digits.
func (h Hash) MarshalText() ([]byte, error) {
	b := make([]byte, hex.EncodedLen(len(h)))
	hex.Encode(b, h[:])
	return b, nil
}

// UnmarshalText parses 64 hex digits.
func (h *Hash) UnmarshalText(b []byte) error {
	p, err := ParseHash(string(b))
	if err != nil {
		return err
	}
	*h = p
	return nil
}

// ParseHash parses a hash written as 64 hex digits.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != hex.EncodedLen(len(h)) {
		return Hash{}, fmt.Errorf("hash %q: want %d hex digits, have %d", s, hex.EncodedLen(len(h)), len(s))
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return Hash{}, fmt.Errorf("hash %q: %w", s, err)
	}
	return h, nil
}

// Fact is one immutable record in a thread. A store assigns Thread, Seq, At
// and Prev when it appends a Draft; nothing updates or deletes a fact.
type Fact struct {
	// Thread is the id of the thread the fact belongs to.
	Thread string
	// Seq is the fact's position in its thread: 1 for the first fact, with
	// no gaps.
	Seq uint64
	// Kind names what the fact records.
	Kind Kind
	// Cause is the key of the transition that appended the fact, or
	// "ingress/<idempotency key>" for a fact posted from outside.
	Cause string
	// At is when the store appended the fact, in UTC. It must lie within
	// the range of int64 Unix nanoseconds (the years 1678 to 2262).
	At time.Time
	// Data is the kind's payload, msgpack-encoded. Decode reads it.
	Data []byte
	// Prev is the hash of the previous fact in the thread; zero for Seq 1.
	Prev Hash
}

// hashTag opens the hashed byte layout and names its version. A new layout
// gets a new tag, so two layouts never produce the same bytes.
const hashTag = "harness/fact/v1\n"

// Hash returns the SHA-256 of the fact's canonical byte layout, version 1:
//
//	"harness/fact/v1\n"           16 bytes, names the layout
//	len(Thread)  uint64 big-endian, then the bytes of Thread
//	Seq          uint64 big-endian
//	len(Kind)    uint64 big-endian, then the bytes of Kind
//	len(Cause)   uint64 big-endian, then the bytes of Cause
//	At           int64 big-endian, UTC Unix nanoseconds
//	len(Data)    uint64 big-endian, then the bytes of Data
//	Prev         32 bytes
//
// Every field is covered, including Prev, so each fact's hash commits to the
// whole thread before it. The layout depends on nothing but the fact: no
// clock, no map order, no encoder settings. It never changes; a different
// layout would be version 2 with its own tag. A test pins a golden hash.
func (f Fact) Hash() Hash {
	n := len(hashTag) + 8*6 + len(f.Thread) + len(f.Kind) + len(f.Cause)
	if n+len(f.Data)+len(f.Prev) <= hashOnStack {
		// Most facts: the whole layout in one buffer on the stack,
		// summed in one call, nothing allocated.
		var buf [hashOnStack]byte
		b := f.appendHashHead(buf[:0])
		b = append(b, f.Data...)
		return sha256.Sum256(append(b, f.Prev[:]...))
	}
	d := sha256.New()
	d.Write(f.appendHashHead(make([]byte, 0, n)))
	d.Write(f.Data)
	d.Write(f.Prev[:])
	var h Hash
	d.Sum(h[:0])
	return h
}

// hashOnStack is the longest layout Hash lays out on the stack.
const hashOnStack = 1024

// appendHashHead appends the layout Hash sums up to the payload's bytes.
func (f Fact) appendHashHead(dst []byte) []byte {
	dst = append(dst, hashTag...)
	dst = appendString(dst, f.Thread)
	dst = binary.BigEndian.AppendUint64(dst, f.Seq)
	dst = appendString(dst, string(f.Kind))
	dst = appendString(dst, f.Cause)
	dst = binary.BigEndian.AppendUint64(dst, uint64(f.At.UnixNano()))
	return binary.BigEndian.AppendUint64(dst, uint64(len(f.Data)))
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// validateAt reports whether t can be stored as int64 Unix nanoseconds.
func validateAt(t time.Time) error {
	if t.Before(minTime) || t.After(maxTime) {
		return fmt.Errorf("%w: time %s is outside the years 1678 to 2262", ErrInvalid, t.Format(time.RFC3339Nano))
	}
	return nil
}

// validateEnvelope checks the fields every stored fact must have. The
// payload is checked separately (see CheckPayload) because reading a log
// never needs it.
func (f Fact) validateEnvelope() error {
	return f.validateStored(false)
}

// validateStored is validateEnvelope, skipping the kind's check when
// kindChecked says it was made already (a registered kind was checked when
// it was registered).
func (f Fact) validateStored(kindChecked bool) error {
	if f.Seq == 0 {
		return fmt.Errorf("%w: seq 0 (seqs start at 1)", ErrInvalid)
	}
	if f.Seq == 1 && !f.Prev.IsZero() {
		return fmt.Errorf("%w: seq 1 has prev %s; the first fact's prev is zero", ErrInvalid, f.Prev)
	}
	if f.Seq > 1 && f.Prev.IsZero() {
		return fmt.Errorf("%w: seq %d has a zero prev", ErrInvalid, f.Seq)
	}
	if !kindChecked {
		if err := f.Kind.Validate(); err != nil {
			return err
		}
	}
	if err := ValidateCause(f.Cause); err != nil {
		return err
	}
	return validateAt(f.At)
}

// Draft is a fact before it has a place in a thread: what a transition or an
// ingress returns. The store assigns Thread, Seq, At and Prev.
type Draft struct {
	// Kind names what the fact records.
	Kind Kind
	// Cause is the transition key or ingress cause the fact comes from.
	Cause string
	// Data is the payload, msgpack-encoded; NewDraft fills it. Treat it
	// as read-only: to change a payload, build a new draft.
	Data []byte

	// checkedKind and checkedData are the Kind and Data of a draft that
	// NewDraft encoded from a checked value, so Validate (which a store
	// calls on every append) need not decode that payload again.
	checkedKind Kind
	checkedData []byte
}

// NewDraft returns a draft of kind with the payload encoded by the storage
// codec. For a registered kind the payload must be the registered type (or a
// non-nil pointer to it) and pass its Validate method, if it has one. For an
// unregistered kind the payload may be any value that encoding/json can
// marshal; it is stored as that JSON value in canonical msgpack (see
// Register), and a nil payload stores no bytes.
//
// The cause may be empty: a transition's effect builds its drafts before it
// knows its own key, and the runtime sets the cause when it appends them.
// A store refuses a draft whose cause is still empty (see Draft.Validate).
func NewDraft(kind Kind, cause string, payload any) (Draft, error) {
	if err := kind.Validate(); err != nil {
		return Draft{}, fmt.Errorf("new draft: %w", err)
	}
	if cause != "" {
		if err := ValidateCause(cause); err != nil {
			return Draft{}, fmt.Errorf("new draft %s: %w", kind, err)
		}
	}
	data, err := encodePayload(kind, payload)
	if err != nil {
		return Draft{}, fmt.Errorf("new draft %s (cause %s): %w", kind, cause, err)
	}
	return Draft{Kind: kind, Cause: cause, Data: data, checkedKind: kind, checkedData: data}, nil
}

// Validate reports whether the draft may be appended: its kind and cause
// follow the rules and its payload fits its kind (see CheckPayload). A
// payload NewDraft encoded, and that still has its kind, is known to fit
// and is not decoded again.
func (d Draft) Validate() error {
	if err := d.Kind.Validate(); err != nil {
		return err
	}
	if err := ValidateCause(d.Cause); err != nil {
		return fmt.Errorf("%s: %w", d.Kind, err)
	}
	if d.Kind == d.checkedKind && sameSlice(d.Data, d.checkedData) {
		return nil
	}
	if err := CheckPayload(d.Kind, d.Data); err != nil {
		return fmt.Errorf("%s (cause %s): %w", d.Kind, d.Cause, err)
	}
	return nil
}

// Decode decodes the fact's payload into T. For a registered kind T must be
// the registered type. Fields T does not know are skipped, so a program
// reads facts written by a newer program that added fields. The error names
// the thread, seq and kind.
func Decode[T any](f Fact) (T, error) {
	var v T
	if err := decodeInto(f.Kind, f.Data, &v); err != nil {
		return v, fmt.Errorf("decode %s seq %d (%s): %w", f.Thread, f.Seq, f.Kind, err)
	}
	return v, nil
}

// sameSlice reports whether a and b are the same bytes in memory, not just
// equal ones.
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
