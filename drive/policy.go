package drive

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
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
//
// A path (or list_files pattern) is matched as the workspace-relative path
// it names, cleaned: "./docs/a.md", "docs/x/../a.md" and "<root>/docs/a.md"
// are all "docs/a.md". A path that leaves the workspace ("../x",
// "docs/../../x", an absolute path outside the root) or cannot be cleaned
// is never approved by a pattern or a mode, and a deny pattern of its tool
// cannot be checked against it: a person is asked.
//
// A command is text a shell reads, so an allow pattern's * and ? never
// match the shell's control characters ; & | $ ` < > ( ) or a line break:
// "run_command:go test *" approves "go test ./..." but not
// "go test ./... ; rm -rf ~" nor "go test $(rm -rf ~)". A pattern that
// spells such a character literally matches it there ("run_command:make *
// | tee log"). A deny pattern on a command is only a hint: a shell can
// always spell a command another way ("rm" as "r\m", or through sh -c),
// so deny what must never run by leaving run_command to a person.
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

// Match reports whether the call of tool with args matches the pattern as
// an allow pattern does (see Pattern), in a workspace whose root is
// unknown: an absolute path matches nothing.
func (p Pattern) Match(tool, args string) bool {
	return p.allows(tool, subjectOf("", args))
}

// Subject is what patterns match of a call's arguments: its "path",
// "command" or "pattern" string, the first present, as the call gives it.
func Subject(args string) (string, bool) {
	s := subjectOf("", args)
	return s.raw, s.present
}

// subject is a call's subject, read for matching.
type subject struct {
	present bool
	raw     string
	// command: the subject is a shell command.
	command bool
	// path is the cleaned workspace-relative path of a path subject;
	// clean is false when there is none (it escapes the workspace, or
	// cannot be cleaned).
	path  string
	clean bool
	// isPath: the subject is a "path" argument (not a list_files pattern);
	// resolved is where it leads, following the workspace's symlinks, when
	// the approval can resolve paths (resolves), and unresolvable says
	// that it could not be resolved.
	isPath       bool
	resolved     string
	resolves     bool
	unresolvable bool
}

// match is the path rules match: where it leads, when that is known.
func (s subject) match() string {
	if s.resolves {
		return s.resolved
	}
	return s.path
}

// subjectOf reads the subject of args, a path made relative to root.
func subjectOf(root, args string) subject {
	var a struct {
		Path    *string `json:"path"`
		Command *string `json:"command"`
		Pattern *string `json:"pattern"`
	}
	if json.Unmarshal([]byte(args), &a) != nil {
		return subject{}
	}
	switch {
	case a.Path != nil:
		s := subject{present: true, raw: *a.Path, isPath: true}
		s.path, s.clean = WorkspacePath(root, *a.Path)
		return s
	case a.Command != nil:
		return subject{present: true, raw: *a.Command, command: true}
	case a.Pattern != nil:
		s := subject{present: true, raw: *a.Pattern}
		s.path, s.clean = WorkspacePath(root, *a.Pattern)
		return s
	}
	return subject{}
}

// WorkspacePath is p as a cleaned, slash-separated path relative to the
// workspace root: "./a", "a/b/../a" and "<root>/a" are all "a". ok is
// false for a path that leaves the workspace ("..", "../x", an absolute
// path outside root, any absolute path when root is ""), or that is empty
// or holds a NUL byte.
func WorkspacePath(root, p string) (string, bool) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", false
	}
	if filepath.IsAbs(p) || path.IsAbs(p) {
		if root == "" || !filepath.IsAbs(root) {
			return "", false
		}
		rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(p))
		if err != nil {
			return "", false
		}
		p = filepath.ToSlash(rel)
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") || path.IsAbs(c) {
		return "", false
	}
	return c, true
}

// allows reports whether the pattern, as an allow pattern, matches a call
// of tool with subject s.
func (p Pattern) allows(tool string, s subject) bool {
	switch {
	case !glob(p.Tool, tool):
		return false
	case p.Glob == "":
		return true
	case !s.present:
		return false
	case s.command:
		return globMatch(p.Glob, s.raw, isShellControl)
	}
	return s.clean && !s.unresolvable && glob(p.Glob, s.match())
}

// denies reports whether the pattern, as a deny pattern, matches a call of
// tool with subject s: the cleaned path, or the path as given.
func (p Pattern) denies(tool string, s subject) bool {
	switch {
	case !glob(p.Tool, tool):
		return false
	case p.Glob == "":
		return true
	case !s.present:
		return false
	}
	return glob(p.Glob, s.raw) || s.clean && glob(p.Glob, s.path) || s.resolves && glob(p.Glob, s.resolved)
}

// isShellControl reports whether r is a character that makes a shell do
// more than run one command with arguments: a separator, a pipe, a
// substitution, a redirection, a subshell, or a line break.
func isShellControl(r rune) bool {
	return strings.ContainsRune(";&|$`<>()\n\r", r)
}

// glob matches s against pattern: * any run, ? one rune.
func glob(pattern, s string) bool { return globMatch(pattern, s, nil) }

// globMatch matches s against pattern: * any run of runes, ? one rune,
// any other rune itself. A rune for which literal is true is matched only
// by itself in the pattern, never by * or ?.
func globMatch(pattern, s string, literal func(rune) bool) bool {
	p, t := []rune(pattern), []rune(s)
	// next[j]: whether p[i+1:] matches t[j:]; cur[j] the same for p[i:].
	next := make([]bool, len(t)+1)
	cur := make([]bool, len(t)+1)
	next[len(t)] = true
	for i := len(p) - 1; i >= 0; i-- {
		switch p[i] {
		case '*':
			cur[len(t)] = next[len(t)]
			for j := len(t) - 1; j >= 0; j-- {
				cur[j] = next[j] || (literal == nil || !literal(t[j])) && cur[j+1]
			}
		case '?':
			cur[len(t)] = false
			for j := len(t) - 1; j >= 0; j-- {
				cur[j] = (literal == nil || !literal(t[j])) && next[j+1]
			}
		default:
			cur[len(t)] = false
			for j := len(t) - 1; j >= 0; j-- {
				cur[j] = t[j] == p[i] && next[j+1]
			}
		}
		cur, next = next, cur
	}
	return next[0]
}

// Approval decides which confirmations are answered without a person: a
// deny pattern that matches denies the call; otherwise an allow pattern
// that matches, or the mode, approves it; otherwise a person is asked.
// Deny always wins. A call whose path leaves the workspace, or cannot be
// cleaned, is denied by a deny pattern naming its tool alone and otherwise
// put to a person (see Pattern).
type Approval struct {
	Mode  ApproveMode
	Allow []Pattern
	Deny  []Pattern
	// Root is the workspace root absolute paths are made relative to;
	// ApplyApproval uses the runtime's workspace when it is "".
	Root string
	// Resolve, when set, says where a path leads in the workspace,
	// following its symlinks (tools.Set.Resolve): a path rule then matches
	// where a write would land — an allow pattern only there, a deny
	// pattern there or as written — so that a link (docs -> .github) does
	// not walk around a rule. A path it cannot resolve is put to a person.
	Resolve func(path string) (string, error)
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
			return Approval{}, fmt.Errorf("allow: %w", err)
		}
		a.Allow = append(a.Allow, p)
	}
	for _, s := range deny {
		p, err := ParsePattern(s)
		if err != nil {
			return Approval{}, fmt.Errorf("deny: %w", err)
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
	s := subjectOf(a.Root, args)
	if a.Resolve != nil && s.isPath && s.clean {
		if r, err := a.Resolve(s.raw); err == nil {
			s.resolved, s.resolves = r, true
		} else {
			s.unresolvable = true
		}
	}
	for _, p := range a.Deny {
		if p.denies(tool, s) {
			return Decision{Rule: "deny " + p.String()}
		}
	}
	if s.present && !s.command && (!s.clean || s.unresolvable) {
		// Where the call writes cannot be told: no rule may approve it,
		// and a deny pattern cannot be checked. A person decides.
		return Decision{Ask: true}
	}
	for _, p := range a.Allow {
		if p.allows(tool, s) {
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

// ApplyApproval is ApplyPolicy with the approval a.
func ApplyApproval(ctx context.Context, th *harness.Thread, a Approval, waits []Pending) (needPerson []Pending, posted int, err error) {
	return ApplyPolicy(ctx, th, a, waits)
}
