package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// ApproveMode says which tool calls that ask for confirmation are approved
// without asking a person.
type ApproveMode string

// The approval modes.
const (
	// ApproveAsk: every call that asks for confirmation is put to a person
	// (unless an allow pattern matches it).
	ApproveAsk ApproveMode = "ask"
	// ApproveWrites: calls needing the write capability (write_file,
	// edit_file) are approved; commands are put to a person.
	ApproveWrites ApproveMode = "writes"
	// ApproveAll: every call is approved, unless a deny pattern matches.
	ApproveAll ApproveMode = "all"
)

// ParseApproveMode parses ask, writes or all; "" is ask.
func ParseApproveMode(s string) (ApproveMode, error) {
	switch m := ApproveMode(s); m {
	case "":
		return ApproveAsk, nil
	case ApproveAsk, ApproveWrites, ApproveAll:
		return m, nil
	}
	return "", fmt.Errorf("approval mode %q: want ask, writes or all", s)
}

// Pattern matches tool calls: "TOOL" matches every call of the tool,
// "TOOL:GLOB" the calls whose subject matches GLOB. The subject is the
// call's "path" argument (read_file, write_file, edit_file), "command"
// (run_command) or "pattern" (list_files). In GLOB, * matches any run of
// characters, / included, and ? one character; TOOL may be * for every
// tool. Examples: "read_file", "run_command:go test *",
// "write_file:docs/*", "*:*.env".
type Pattern struct {
	Tool string
	// Glob is "" when the pattern names the tool alone.
	Glob string
}

// ParsePattern parses a pattern (see Pattern).
func ParsePattern(s string) (Pattern, error) {
	tool, glob, hasGlob := strings.Cut(s, ":")
	if tool == "" {
		return Pattern{}, fmt.Errorf("tool pattern %q: name a tool (or *) before the colon, as in run_command:go test *", s)
	}
	for _, r := range tool {
		if !(r == '*' || r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return Pattern{}, fmt.Errorf("tool pattern %q: %q is not a tool name", s, tool)
		}
	}
	if hasGlob && glob == "" {
		return Pattern{}, fmt.Errorf("tool pattern %q: empty subject after the colon; use %s alone for every call of the tool", s, tool)
	}
	return Pattern{Tool: tool, Glob: glob}, nil
}

// String returns the pattern as ParsePattern reads it.
func (p Pattern) String() string {
	if p.Glob == "" {
		return p.Tool
	}
	return p.Tool + ":" + p.Glob
}

// Match reports whether the call of tool with args matches the pattern.
func (p Pattern) Match(tool, args string) bool {
	if !glob(p.Tool, tool) {
		return false
	}
	if p.Glob == "" {
		return true
	}
	subject, ok := Subject(args)
	return ok && glob(p.Glob, subject)
}

// Subject is what patterns match of a call's arguments: its "path",
// "command" or "pattern" string, the first present.
func Subject(args string) (string, bool) {
	var a struct {
		Path    *string `json:"path"`
		Command *string `json:"command"`
		Pattern *string `json:"pattern"`
	}
	if json.Unmarshal([]byte(args), &a) != nil {
		return "", false
	}
	for _, s := range []*string{a.Path, a.Command, a.Pattern} {
		if s != nil {
			return *s, true
		}
	}
	return "", false
}

// glob matches s against pattern: * any run, ? one rune.
func glob(pattern, s string) bool {
	// The classic two-pointer match with backtracking to the last star.
	px, sx := 0, 0
	starP, starS := -1, 0
	for sx < len(s) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				starP, starS = px, sx
				px++
				continue
			case '?':
				_, n := utf8.DecodeRuneInString(s[sx:])
				px, sx = px+1, sx+n
				continue
			default:
				if s[sx] == c {
					px, sx = px+1, sx+1
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starS++
		px, sx = starP+1, starS
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}

// Approval decides which confirmations are answered without a person: a
// deny pattern that matches denies the call; otherwise an allow pattern
// that matches, or the mode, approves it; otherwise a person is asked.
// Deny always wins.
type Approval struct {
	Mode  ApproveMode
	Allow []Pattern
	Deny  []Pattern
}

// NewApproval parses a mode and patterns.
func NewApproval(mode string, allow, deny []string) (Approval, error) {
	m, err := ParseApproveMode(mode)
	if err != nil {
		return Approval{}, err
	}
	a := Approval{Mode: m}
	for _, s := range allow {
		p, err := ParsePattern(s)
		if err != nil {
			return Approval{}, fmt.Errorf("--allow: %w", err)
		}
		a.Allow = append(a.Allow, p)
	}
	for _, s := range deny {
		p, err := ParsePattern(s)
		if err != nil {
			return Approval{}, fmt.Errorf("--deny: %w", err)
		}
		a.Deny = append(a.Deny, p)
	}
	return a, nil
}

// Decision is what an Approval says of one call.
type Decision struct {
	// Ask is true when a person must answer; otherwise Approved says
	// what the policy answered.
	Ask      bool
	Approved bool
	// Rule is the pattern or mode that decided, for the record.
	Rule string
}

// Decide answers a call of tool, needing capability, with args.
func (a Approval) Decide(tool string, capability action.Capability, args string) Decision {
	for _, p := range a.Deny {
		if p.Match(tool, args) {
			return Decision{Rule: "deny " + p.String()}
		}
	}
	for _, p := range a.Allow {
		if p.Match(tool, args) {
			return Decision{Approved: true, Rule: "allow " + p.String()}
		}
	}
	switch {
	case a.Mode == ApproveAll:
		return Decision{Approved: true, Rule: "approve all"}
	case a.Mode == ApproveWrites && capability == action.Write:
		return Decision{Approved: true, Rule: "approve writes"}
	}
	return Decision{Ask: true}
}

// AnswerKey is the idempotency key of a person's answer to a request:
// "confirm-<id>" for a confirmation, "answer-<id>" for a question,
// "reconcile-<id>" for an open effect. Every way of answering (the
// prompt, harness approve, harness post) uses it, so an answer given twice
// is appended once.
func AnswerKey(kind facts.Kind, requestID string) string {
	switch kind {
	case facts.KindConfirmationAnswered:
		return "confirm-" + requestID
	case facts.KindQuestionAnswered:
		return "answer-" + requestID
	case facts.KindEffectReconciled:
		return "reconcile-" + requestID
	}
	return string(kind) + "-" + requestID
}

// PolicyBy is who a policy's answer is recorded as given by.
const PolicyBy = "policy"

// ApplyApproval answers the pending confirmations the approval decides,
// posting confirmation.answered through rt (by PolicyBy, with the rule as
// the reason, under AnswerKey), and returns the pending requests that
// still need a person. posted counts the answers appended.
func ApplyApproval(ctx context.Context, rt *Runtime[Services], actor Actor[Services], id string, a Approval, waits []Pending) (needPerson []Pending, posted int, err error) {
	for _, w := range waits {
		if w.Kind != fold.WaitConfirmation {
			needPerson = append(needPerson, w)
			continue
		}
		var capability action.Capability
		if t, ok := rt.Services.Tools.Lookup(w.Tool); ok {
			capability = t.Capability()
		}
		dec := a.Decide(w.Tool, capability, w.Args)
		if dec.Ask {
			needPerson = append(needPerson, w)
			continue
		}
		d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{
			RequestID: w.RequestID, Approved: dec.Approved, By: PolicyBy, Reason: dec.Rule, Digest: w.Digest,
		})
		if err != nil {
			return nil, posted, err
		}
		p, err := rt.Post(ctx, actor, id, d, AnswerKey(facts.KindConfirmationAnswered, w.RequestID))
		if err != nil {
			return nil, posted, fmt.Errorf("answer %s by policy (%s): %w", w.RequestID, dec.Rule, err)
		}
		if !p.Duplicate {
			posted++
		}
	}
	return needPerson, posted, nil
}
