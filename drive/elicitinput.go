package drive

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// MaxStdinAnswer bounds what an answer reads from standard input.
const MaxStdinAnswer = 64 << 10

// ElicitInput is a person's answer to an MCP server's question as typed
// on a command line: the action (accept, decline or cancel) and, to
// accept, the input as fields NAME=VALUE or as one JSON object. A field
// given as NAME=- (one at most), or the content "-", is read from Stdin:
// a secret given there is not in the command line other users' processes
// can read (/proc/PID/cmdline) nor in the shell's history.
type ElicitInput struct {
	Request string
	Action  string
	Content string
	Fields  []string
	Stdin   io.Reader
}

// Reply is the reply the input gives; an input that does not fit is
// ErrBadReply, naming what is wrong.
func (in ElicitInput) Reply() (Reply, error) {
	r := Reply{Kind: fold.WaitQuestion, Request: in.Request, Elicit: facts.ElicitAction(in.Action)}
	if err := r.Elicit.Validate(); err != nil {
		return r, fmt.Errorf("%w: action %q: want accept, decline or cancel", ErrBadReply, in.Action)
	}
	if r.Elicit != facts.ElicitAccept && (in.Content != "" || len(in.Fields) > 0) {
		return r, fmt.Errorf("%w: fields and content go with accept", ErrBadReply)
	}
	if in.Content != "" && len(in.Fields) > 0 {
		return r, fmt.Errorf("%w: give the input as fields or as content, not both", ErrBadReply)
	}
	fromStdin := 0
	readStdin := func(what string) (string, error) {
		if fromStdin++; fromStdin > 1 || in.Stdin == nil {
			return "", fmt.Errorf("%w: %s: standard input gives one value only", ErrBadReply, what)
		}
		b, err := io.ReadAll(io.LimitReader(in.Stdin, MaxStdinAnswer+1))
		if err != nil {
			return "", fmt.Errorf("%s: read standard input: %w", what, err)
		}
		if len(b) > MaxStdinAnswer {
			return "", fmt.Errorf("%w: %s: standard input holds over %d bytes", ErrBadReply, what, MaxStdinAnswer)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	content := in.Content
	if content == "-" {
		c, err := readStdin("content -")
		if err != nil {
			return r, err
		}
		content = c
	}
	if content != "" {
		if !json.Valid([]byte(content)) {
			return r, fmt.Errorf("%w: the content is not JSON", ErrBadReply)
		}
		r.Content = json.RawMessage(content)
	}
	for _, kv := range in.Fields {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return r, fmt.Errorf("%w: field %q: want NAME=VALUE", ErrBadReply, kv)
		}
		if v == "-" {
			read, err := readStdin("field " + k + "=-")
			if err != nil {
				return r, err
			}
			v = read
		}
		if r.Fields == nil {
			r.Fields = map[string]string{}
		}
		r.Fields[k] = v
	}
	return r, nil
}
