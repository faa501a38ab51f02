package model

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/seed-7cc7a084/harness/facts"
)

// Scripted is a Model that answers from a script: the Nth decision for
// the Nth model turn of a thread, whatever the conversation says. A script
// is JSON Lines, one decision per line (blank lines and lines starting with
// '#' are skipped and do not count):
//
//	{"text": "I'll change the TTL.", "tool_calls": [{"id": "call_1", "name": "write_file", "args": "{\"path\":\"cache.toml\"}"}]}
//	{"question": {"text": "Which file?", "options": ["a.go", "b.go"]}}
//	{"text": "Asking.", "tool_calls": [{"id": "q1", "name": "ask_person", "args": "{\"text\":\"Which file?\",\"options\":[\"a.go\",\"b.go\"]}"}]}
//	{"fail": ["transient"], "text": "done", "usage": {"input_tokens": 10, "output_tokens": 2}}
//
// The second and third lines ask the same: a line whose only call is
// ask_person (AskTool) is a question, as a provider's model's is.
//
// "fail" lists errors to return, by class, on the first attempts at that
// turn before the decision is returned; it lets a script rehearse retries.
// Attempts are counted per thread and turn in this process.
//
// "thread" gives a line to some threads only — the child threads of a
// delegation, say: a line whose "thread" is X is for the thread X and the
// threads whose id ends with "." followed by X (a child is
// "<parent>.<turn>-<call id>", so "1-d1" names the child that the call d1
// of turn 1 spawned, whatever its parent's id). A thread some line names
// takes those lines, in order; every other thread takes the lines that
// name none.
type Scripted struct {
	name  string
	turns []scriptLine

	mu       sync.Mutex     // guards attempts
	attempts map[string]int // "thread\x00turn" → attempts so far; never iterated
}

type scriptLine struct {
	Decision
	Fail   []facts.ErrorClass `json:"fail,omitempty"`
	Thread string             `json:"thread,omitempty"`
}

// maxScriptLine is the longest line of a script: one decision, its
// tool calls' arguments included. A longer line is an error, never cut.
const maxScriptLine = 16 << 20

// ParseScript reads a script (see Scripted). A line that is not a decision
// is an error naming the script and the line number.
func ParseScript(name string, data []byte) (*Scripted, error) {
	s := &Scripted{name: name, attempts: make(map[string]int)}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxScriptLine)
	n := 1
	for ; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var l scriptLine
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("script %s line %d: not a decision: %w", name, n, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("script %s line %d: more than one JSON value on the line", name, n)
		}
		if err := l.Decision.Validate(); err != nil {
			return nil, fmt.Errorf("script %s line %d: %w", name, n, err)
		}
		for _, c := range l.Fail {
			if err := c.Validate(); err != nil {
				return nil, fmt.Errorf("script %s line %d: fail: %w", name, n, err)
			}
		}
		s.turns = append(s.turns, l)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("script %s line %d: longer than the %d bytes (%d MiB) a line may be: %w", name, n, maxScriptLine, maxScriptLine>>20, err)
	} else if err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	if len(s.turns) == 0 {
		return nil, fmt.Errorf("script %s: no decisions", name)
	}
	return s, nil
}

// LoadScript reads a script from a file.
//
// The file must be a regular file of at most MaxScriptBytes: a path that
// names a device, a pipe or a directory is an error, never a read that
// does not end.
func LoadScript(path string) (*Scripted, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("load script %s: not a regular file (%s)", path, fi.Mode().Type())
	}
	if fi.Size() > MaxScriptBytes {
		return nil, fmt.Errorf("load script %s: %d bytes, more than the %d a script may hold", path, fi.Size(), MaxScriptBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxScriptBytes+1))
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	if len(data) > MaxScriptBytes {
		return nil, fmt.Errorf("load script %s: more than the %d bytes a script may hold", path, MaxScriptBytes)
	}
	return ParseScript(path, data)
}

// MaxScriptBytes is the largest script LoadScript reads.
const MaxScriptBytes = 256 << 20

// Len is the number of decisions in the script.
func (s *Scripted) Len() int { return len(s.turns) }

// linesFor are the lines for thread id (see Scripted).
func (s *Scripted) linesFor(id string) []scriptLine {
	var named, plain []scriptLine
	for _, l := range s.turns {
		switch {
		case l.Thread == "":
			plain = append(plain, l)
		case l.Thread == id || strings.HasSuffix(id, "."+l.Thread):
			named = append(named, l)
		}
	}
	if len(named) > 0 {
		return named
	}
	return plain
}

// Turn returns the decision for req.Turn. A turn past the end of the
// script is an invalid_output error naming the script.
func (s *Scripted) Turn(ctx context.Context, req Request) (Decision, error) {
	if err := ctx.Err(); err != nil {
		return Decision{}, err
	}
	lines := s.linesFor(req.Thread)
	if req.Turn < 1 || req.Turn > len(lines) {
		return Decision{}, &Error{Class: facts.ClassInvalidOutput,
			Err: fmt.Errorf("script %s has %d decisions for thread %s; turn %d asked", s.name, len(lines), req.Thread, req.Turn)}
	}
	l := lines[req.Turn-1]
	s.mu.Lock()
	k := fmt.Sprintf("%s\x00%d", req.Thread, req.Turn)
	attempt := s.attempts[k]
	s.attempts[k]++
	s.mu.Unlock()
	if attempt < len(l.Fail) {
		return Decision{}, &Error{Class: l.Fail[attempt],
			Err: fmt.Errorf("scripted %s failure %d at turn %d", l.Fail[attempt], attempt+1, req.Turn)}
	}
	// A line whose only call is ask_person asks, as a provider's model
	// does (AsQuestion), where no tool of that name is offered.
	_, asks := OfferTools(req.Tools, true)
	return AsQuestion(cloneDecision(l.Decision), asks), nil
}

func cloneDecision(d Decision) Decision {
	d.ToolCalls = append([]facts.ToolCall(nil), d.ToolCalls...)
	if d.Question != nil {
		q := *d.Question
		q.Options = append([]string(nil), q.Options...)
		d.Question = &q
	}
	return d
}
