package search

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// Query is a parsed search: every condition must hold of a fact (AND).
type Query struct {
	// Text is the query as written.
	Text string `json:"text"`
	// Terms are the index terms a fact must all have.
	Terms []string `json:"terms"`
	// Since and Until bound the fact's time (zero: no bound); Until is
	// exclusive.
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// Status keeps the facts of threads whose status is this one; the
	// index knows nothing of it (a thread's status is its view's, see
	// package drive), so the caller checks it (Options.Keep).
	Status string `json:"status,omitempty"`
}

// Fields are the fields a query may name, in the order help shows them.
var Fields = []string{"kind", "tool", "path", "by", "status", "effect", "check", "model", "thread", "since", "until"}

// MaxQueryTerms bounds how many terms a query may have.
const MaxQueryTerms = 32

// maxValue bounds a field's value and a word.
const maxValue = 256

// Parse reads a query: terms separated by spaces, each field:value (the
// value quoted with "…" when it holds spaces) or a word of free text.
// Words match whole words of the text of a fact, case folded. since: and
// until: take a date (2006-01-02), a time (RFC 3339) or a duration back
// from now (90m, 36h, 7d). A term that does not parse is a *QueryError
// naming it. statuses, when given, are the values status: may take.
func Parse(text string, now time.Time, statuses ...string) (Query, error) {
	q := Query{Text: text}
	toks, err := splitQuery(text)
	if err != nil {
		return Query{}, err
	}
	if len(toks) == 0 {
		return Query{}, &QueryError{Why: "empty: give a field (" + strings.Join(Fields, ":, ") + ":) or words"}
	}
	if len(toks) > MaxQueryTerms {
		return Query{}, &QueryError{Why: fmt.Sprintf("%d terms, more than %d", len(toks), MaxQueryTerms)}
	}
	add := func(t string) {
		if !slices.Contains(q.Terms, t) {
			q.Terms = append(q.Terms, t)
		}
	}
	for i, tok := range toks {
		bad := func(format string, args ...any) error {
			return &QueryError{Term: tok.raw, N: i + 1, Why: fmt.Sprintf(format, args...)}
		}
		if len(tok.value) > maxValue {
			return Query{}, bad("longer than %d bytes", maxValue)
		}
		if tok.field == "" {
			n := 0
			words(tok.value, func(w string) bool { add(termWord + w); n++; return true })
			if n == 0 {
				return Query{}, bad("no word to look for (words are letters and digits)")
			}
			continue
		}
		v := tok.value
		if v == "" {
			return Query{}, bad("%s: has no value", tok.field)
		}
		switch tok.field {
		case "kind":
			if err := facts.Kind(v).Validate(); err != nil {
				return Query{}, bad("not a kind (such as action.completed, or action)")
			}
			add(termKind + v)
		case "tool":
			add(termTool + v)
		case "path":
			p := cleanPath(v)
			if p == "" {
				return Query{}, bad("not a path")
			}
			add(termPath + p)
		case "by":
			add(termBy + v)
		case "effect":
			if err := facts.EffectState(v).Validate(); err != nil {
				return Query{}, bad("want reported, observed, unknown or none")
			}
			add(termEffect + v)
		case "check":
			add(termCheck + v)
		case "model":
			add(termModel + v)
		case "thread":
			if err := thread.ValidateID(v); err != nil {
				return Query{}, bad("%v", err)
			}
			add(termThread + v)
		case "status":
			if len(statuses) > 0 && !slices.Contains(statuses, v) {
				return Query{}, bad("want %s", strings.Join(statuses, ", "))
			}
			if q.Status != "" && q.Status != v {
				return Query{}, bad("a second status (a thread has one)")
			}
			q.Status = v
		case "since", "until":
			t, err := parseWhen(v, now)
			if err != nil {
				return Query{}, bad("%v", err)
			}
			if tok.field == "since" {
				q.Since = t
			} else {
				q.Until = t
			}
		default:
			return Query{}, bad("no field %q (fields: %s; quote a word with a colon: \"%s\")", tok.field, strings.Join(Fields, ", "), tok.raw)
		}
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return Query{}, &QueryError{Why: fmt.Sprintf("since %s is not before until %s", q.Since.Format(time.RFC3339), q.Until.Format(time.RFC3339))}
	}
	if len(q.Terms) == 0 {
		q.Terms = []string{termAll}
	}
	return q, nil
}

// token is one term of a query as written.
type token struct {
	raw, field, value string
}

// splitQuery splits a query into its terms: runs of non-space, where "…"
// quotes spaces (a quote's content is the value; a field's name stands
// before it: path:"my dir/a b").
func splitQuery(text string) ([]token, error) {
	if !utf8.ValidString(text) {
		return nil, &QueryError{Why: "not valid UTF-8"}
	}
	var toks []token
	i := 0
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		start := i
		var b strings.Builder
		for i < len(text) {
			r, n := utf8.DecodeRuneInString(text[i:])
			if r == '"' {
				end := strings.IndexByte(text[i+1:], '"')
				if end < 0 {
					return nil, &QueryError{Term: text[start:], N: len(toks) + 1, Why: "a quote that is not closed"}
				}
				b.WriteString(text[i+1 : i+1+end])
				i += end + 2
				continue
			}
			if unicode.IsSpace(r) {
				break
			}
			b.WriteRune(r)
			i += n
		}
		tok := token{raw: text[start:i], value: b.String()}
		// A field is lowercase letters and a colon, unquoted, at the start.
		if c := strings.IndexByte(tok.raw, ':'); c > 0 && isFieldName(tok.raw[:c]) {
			tok.field = tok.raw[:c]
			tok.value = tok.value[c+1:]
		}
		toks = append(toks, tok)
	}
	return toks, nil
}

func isFieldName(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// parseWhen reads a date, a time or a duration back from now, between
// 1970 and 2262 (a fact's time is Unix nanoseconds).
func parseWhen(v string, now time.Time) (time.Time, error) {
	t, err := whenOf(v, now)
	if err != nil {
		return t, err
	}
	if t.Year() < 1970 || t.Year() > 2261 {
		return time.Time{}, fmt.Errorf("%s is before 1970 or after 2261", t.Format(time.RFC3339))
	}
	return t, nil
}

func whenOf(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t.UTC(), nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 && n <= 100000 {
			return now.Add(-time.Duration(n) * 24 * time.Hour).UTC(), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("want a date (2006-01-02), a time (RFC 3339) or a duration back from now (90m, 36h, 7d)")
}

// cleanPath is a path as the index keeps it: slash separated, cleaned, no
// leading "./" or "/" and no trailing "/"; "" for none.
func cleanPath(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	p = path.Clean("/" + p)
	p = strings.TrimPrefix(p, "/")
	if len(p) > maxValue || strings.IndexByte(p, 0) >= 0 {
		return ""
	}
	return p
}
