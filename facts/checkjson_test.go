package facts_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

func TestCheckJSON(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		err       error
		want      string
	}{
		{name: "object", doc: `{"path": "a", "content": "b"}`},
		{name: "scalars and arrays", doc: ` [1, "x", null, true, {"a": [{"a": 1}, {"a": 2}]}] `},
		{name: "same key in sibling objects", doc: `{"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 3}, {"k": 4}]}`},
		{name: "keys differ only in case", doc: `{"path": 1, "PATH": 2}`},
		{name: "huge number", doc: `{"n": 1e999}`},
		{name: "empty", doc: "", err: facts.ErrMalformedJSON, want: "malformed JSON: no document"},
		{name: "blank", doc: " \n\t", err: facts.ErrMalformedJSON, want: "malformed JSON: no document"},
		{name: "truncated", doc: `{"path": "a"`, err: facts.ErrMalformedJSON, want: "malformed JSON at byte 12: unexpected end of JSON input"},
		{name: "trailing data", doc: `{"path": "a"} {}`, err: facts.ErrMalformedJSON, want: "malformed JSON at byte 15: invalid character '{' after top-level value"},
		{name: "too deep", doc: strings.Repeat("[", 10001) + strings.Repeat("]", 10001), err: facts.ErrMalformedJSON, want: "exceeded max depth"},
		{name: "top-level duplicate", doc: `{"path": "a.txt", "content": "x", "content": 7}`, err: facts.ErrDuplicateKey,
			want: `duplicate key "content" in the top-level object`},
		{name: "escaped duplicate", doc: `{"path": "a", "p\u0061th": "b"}`, err: facts.ErrDuplicateKey,
			want: `duplicate key "path" in the top-level object`},
		{name: "nested duplicate", doc: `{"opts": {"x": 1, "list": [0, {"y": 1, "y": 2}]}}`, err: facts.ErrDuplicateKey,
			want: `duplicate key "y" in the object at $.opts.list[1]`},
		{name: "odd key on the way", doc: `{"a b": [{"k": 1, "k": 1}]}`, err: facts.ErrDuplicateKey,
			want: `duplicate key "k" in the object at $["a b"][0]`},
		{name: "duplicate in an array's object", doc: `[{}, {"k": null, "k": null}]`, err: facts.ErrDuplicateKey,
			want: `duplicate key "k" in the object at $[1]`},
		{name: "empty key twice", doc: `{"": 1, "": 2}`, err: facts.ErrDuplicateKey, want: `duplicate key "" in the top-level object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := facts.CheckJSON([]byte(tc.doc))
			if tc.err == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.err)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func ExampleCheckJSON() {
	fmt.Println(facts.CheckJSON([]byte(`{"path": "notes.txt", "content": "hello"}`)))
	fmt.Println(facts.CheckJSON([]byte(`{"path": "notes.txt", "path": ".git/hooks/pre-commit"}`)))
	// Output:
	// <nil>
	// duplicate key "path" in the top-level object: an object names each key once
}

// FuzzCheckJSON: CheckJSON refuses exactly what encoding/json finds
// malformed, never panics, accepts whatever encoding/json writes (a map
// cannot hold a key twice), and refuses a valid object given a second copy
// of one of its keys.
func FuzzCheckJSON(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `[]`, `null`, `{"a":1}`, `{"a":1,"a":2}`, `{"a":{"b":[{"c":1,"c":2}]}}`, `[{"x":1},{"x":1}]`,
		`{"a\u0000":1,"a\u0000":2}`, `{"\ud800":1,"\udfff":2}`, `"str"`, `{"a":1}x`, `[[[[`, `{"n":1e700}`, `[-1e-700]`, "{\"\xff\":1,\"\xfe\":2}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		err := facts.CheckJSON(raw)
		if !json.Valid(raw) {
			require.ErrorIs(t, err, facts.ErrMalformedJSON)
			return
		}
		if err != nil {
			require.ErrorIs(t, err, facts.ErrDuplicateKey)
			require.False(t, errors.Is(err, facts.ErrMalformedJSON))
		}
		// Numbers stay text: 1e700 is valid JSON, out of float64's range.
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		require.NoError(t, dec.Decode(&v))
		again, merr := json.Marshal(v)
		require.NoError(t, merr)
		require.NoError(t, facts.CheckJSON(again), "%s", again)
		if m, ok := v.(map[string]any); ok && len(m) > 0 && err == nil {
			for k := range m {
				key, _ := json.Marshal(k)
				dup := append([]byte(`{`+string(key)+`:0,`), again[1:]...)
				require.ErrorIs(t, facts.CheckJSON(dup), facts.ErrDuplicateKey, "%s", dup)
				break
			}
		}
	})
}

// BenchmarkCheckJSON measures CheckJSON of a tool call's arguments (one
// 4 KiB string, a few keys, a nested object) against json.Valid, the raw
// baseline, in the same run.
func BenchmarkCheckJSON(b *testing.B) {
	raw := []byte(`{"path": "internal/cache/cache.go", "content": "` + strings.Repeat("package cache\\n", 300) +
		`", "opts": {"mode": 420, "tags": ["a", "b", {"k": 1}]}}`)
	var rawTime, checkTime time.Duration
	for b.Loop() {
		t0 := time.Now()
		if !json.Valid(raw) {
			b.Fatal("invalid")
		}
		t1 := time.Now()
		if err := facts.CheckJSON(raw); err != nil {
			b.Fatal(err)
		}
		rawTime += t1.Sub(t0)
		checkTime += time.Since(t1)
	}
	b.ReportMetric(float64(checkTime.Nanoseconds())/float64(b.N)/1e3, "µs/check")
	b.ReportMetric(float64(checkTime)/float64(max(rawTime, 1)), "ratio")
}
