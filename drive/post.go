package drive

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
)

// MaxPayload bounds a payload read from a file or standard input
// (ReadPayload): a fact's largest (facts.MaxLineLen holds it encoded).
const MaxPayload = 64 << 20

// ReadPayload reads a fact's payload as a person gives it: "-" reads
// stdin, "@FILE" the file, anything else is the JSON itself. A payload
// over MaxPayload is an error: a stream that never ends is not read
// for ever.
func ReadPayload(v string, stdin io.Reader) ([]byte, error) {
	var r io.Reader
	switch {
	case v == "-":
		r = stdin
	case strings.HasPrefix(v, "@"):
		f, err := os.Open(v[1:])
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	default:
		return []byte(v), nil
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxPayload+1))
	switch {
	case err != nil && v == "-":
		return nil, fmt.Errorf("read stdin: %w", err)
	case err != nil:
		return nil, err
	case len(b) > MaxPayload:
		return nil, fmt.Errorf("a payload over %d MiB", MaxPayload>>20)
	}
	return b, nil
}

// IngressKindList names the kinds a person may post, for a person:
// "user.message, confirmation.answered, …".
func IngressKindList() string {
	ks := make([]string, len(facts.IngressKinds))
	for i, k := range facts.IngressKinds {
		ks[i] = string(k)
	}
	return strings.Join(ks, ", ")
}

// PostKey is the idempotency key of a post of kind that answers the
// request (DraftOf): the answer's own (AnswerKey), shared by every way of
// answering, or for a post that answers none a fresh one (NewKey).
func PostKey(kind facts.Kind, request string) string {
	if request != "" {
		return AnswerKey(kind, request)
	}
	return NewKey("post")
}

// NewKey is a fresh idempotency key: prefix, a dash, 12 random hex
// digits.
func NewKey(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}
