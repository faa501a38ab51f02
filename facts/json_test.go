package facts_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// roundTripFacts are facts a store could hold, including the awkward ones.
func roundTripFacts(t testing.TB) []facts.Fact {
	t.Helper()
	out := sampleFacts(t)
	prev := out[len(out)-1].Hash()
	next := func(kind facts.Kind, data []byte) {
		f := facts.Fact{Thread: "t1", Seq: uint64(len(out) + 1), Kind: kind, Cause: "ingress/k" + strconv.Itoa(len(out)),
			At: time.Date(2025, 3, 2, 0, 0, 0, len(out), time.UTC), Data: data, Prev: prev}
		prev = f.Hash()
		out = append(out, f)
	}
	draft := func(kind facts.Kind, payload any) []byte {
		d, err := facts.NewDraft(kind, "c", payload)
		require.NoError(t, err)
		return d.Data
	}
	// A command printed bytes that are not UTF-8.
	next(facts.KindActionCompleted, draft(facts.KindActionCompleted, facts.ActionCompleted{
		ActionID: "a2", Report: facts.Report{Status: facts.StatusFailed, Stdout: "\xff\xfe binary \x00"},
		EffectState: facts.EffectUnknown}))
	// HTML-looking text in strings and in raw JSON.
	next(facts.KindActionRequested, draft(facts.KindActionRequested, facts.ActionRequested{
		ActionID: "a3", Payload: facts.RawJSON(`{"html": "<a href=\"x\">&amp;</a>", "ls": "\u2028"}`)}))
	// Unregistered kinds: a JSON value, nothing, and bytes with no JSON form.
	next("app.note", draft("app.note", map[string]any{"z": 1.5, "a": []any{true, nil, "x", -3, uint64(1) << 63}}))
	next("app.ping", nil)
	next("app.blob", []byte{0xc4, 0x03, 1, 2, 3})                      // msgpack bin
	next("app.weird", []byte{0x81, 0x01, 0x02})                        // a map with an integer key
	next("app.struct", []byte{0x82, 0xa1, 'b', 0x01, 0xa1, 'a', 0x02}) // keys not sorted
	// A payload written by a newer program with a field this one lacks is
	// kept exactly as well, though this program would refuse to append it.
	return out
}

func TestJSONRoundTripIsExact(t *testing.T) {
	in := roundTripFacts(t)
	var buf bytes.Buffer
	require.NoError(t, facts.WriteJSON(&buf, in...))
	require.Equal(t, len(in), strings.Count(buf.String(), "\n"))

	out, err := facts.ParseJSON(&buf)
	require.NoError(t, err)
	require.Equal(t, in, out)
	for i := range in {
		require.Equal(t, in[i].Hash(), out[i].Hash())
	}
}

// json.Marshal escapes HTML; the round trip must survive that too.
func TestJSONMarshalRoundTripIsExact(t *testing.T) {
	for _, f := range roundTripFacts(t) {
		b, err := json.Marshal(f)
		require.NoError(t, err)
		var got facts.Fact
		require.NoError(t, json.Unmarshal(b, &got), string(b))
		require.Equal(t, f, got)
	}
}

func TestJSONIsReadable(t *testing.T) {
	d, err := facts.NewDraft(facts.KindConfirmationAnswered, facts.IngressCause("k1"),
		facts.ConfirmationAnswered{RequestID: "r1", Approved: false, By: "ana", Reason: "not <that> file"})
	require.NoError(t, err)
	f := facts.Fact{Thread: "t1", Seq: 1, Kind: d.Kind, Cause: d.Cause,
		At: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC), Data: d.Data}
	var buf bytes.Buffer
	require.NoError(t, facts.WriteJSON(&buf, f))
	require.Equal(t, `{"thread":"t1","seq":1,"kind":"confirmation.answered","cause":"ingress/k1",`+
		`"at":"2025-01-02T03:04:05.000000006Z","data":{"request_id":"r1","approved":false,"by":"ana","reason":"not <that> file"},`+
		`"prev":"0000000000000000000000000000000000000000000000000000000000000000","hash":"`+f.Hash().String()+`"}`+"\n", buf.String())
}

func TestJSONCarriesExactBytesOnlyWhenItMust(t *testing.T) {
	for _, f := range roundTripFacts(t) {
		b, err := json.Marshal(f)
		require.NoError(t, err)
		var line map[string]any
		require.NoError(t, json.Unmarshal(b, &line))
		_, exact := line["data_msgpack"]
		_, shown := line["data"]
		switch f.Kind {
		case "app.blob", "app.struct", "app.weird":
			require.True(t, exact, f.Kind)
		case facts.KindActionCompleted:
			require.Equal(t, f.Seq > uint64(len(samples)), exact, "invalid UTF-8 needs the exact bytes")
		default:
			require.False(t, exact, f.Kind)
		}
		require.Equal(t, f.Kind != "app.weird", shown, "a map with an integer key has no JSON form")
	}
}

func TestParseJSONSkipsBlankLinesAndReadsCRLF(t *testing.T) {
	in := sampleFacts(t)[:2]
	var buf bytes.Buffer
	require.NoError(t, facts.WriteJSON(&buf, in...))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	text := "\n" + lines[0] + "\r\n  \n" + lines[1] // no final newline
	out, err := facts.ParseJSON(strings.NewReader(text))
	require.NoError(t, err)
	require.Equal(t, in, out)
}

func TestParseJSONRefusesWhatIsNotAFact(t *testing.T) {
	good := sampleFacts(t)[:2]
	var buf bytes.Buffer
	require.NoError(t, facts.WriteJSON(&buf, good...))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	first, second := lines[0], lines[1]
	edit := func(line string, change func(map[string]any)) string {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		change(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return string(b)
	}
	rehash := func(f facts.Fact) string {
		b, err := json.Marshal(f)
		require.NoError(t, err)
		return string(b)
	}

	for _, tc := range []struct {
		name string
		line string
		is   error
		says string
	}{
		{"a log line", "2025/01/02 12:00:00 INFO starting worker", facts.ErrInvalid, "not a JSON object"},
		{"a truncated object", second[:len(second)/2], facts.ErrInvalid, "malformed JSON"},
		{"a JSON array", `[1,2]`, facts.ErrInvalid, "not a JSON object"},
		{"two objects on a line", second + second, facts.ErrInvalid, "text after the JSON object"},
		{"missing kind", edit(second, func(m map[string]any) { delete(m, "kind") }), facts.ErrInvalid, `missing ["kind"]`},
		{"missing cause", edit(second, func(m map[string]any) { delete(m, "cause") }), facts.ErrInvalid, `missing ["cause"]`},
		{"missing several", `{"thread":"t1"}`, facts.ErrInvalid, `missing ["seq" "kind" "cause" "at" "prev" "hash" "data"]`},
		{"an unknown field", edit(second, func(m map[string]any) { m["color"] = "red" }), facts.ErrInvalid, `unknown field "color"`},
		{"seq as a string", edit(second, func(m map[string]any) { m["seq"] = "2" }), facts.ErrInvalid, "seq"},
		{"seq 0", edit(second, func(m map[string]any) { m["seq"] = 0 }), facts.ErrInvalid, "seq 0"},
		{"a bad kind", edit(second, func(m map[string]any) { m["kind"] = "system configured" }), facts.ErrInvalid, "kind"},
		{"a bad hash", edit(second, func(m map[string]any) { m["hash"] = "abc" }), facts.ErrInvalid, "64 hex digits"},
		{"a time with no zone", edit(second, func(m map[string]any) { m["at"] = "2025-01-02 03:04:05" }), facts.ErrInvalid, "at"},
		{"a time past 2262", edit(second, func(m map[string]any) { m["at"] = "2300-01-01T00:00:00Z" }), facts.ErrInvalid, "1678 to 2262"},
		{"a first fact with a prev", edit(first, func(m map[string]any) { m["prev"] = strings.Repeat("1", 64) }), facts.ErrInvalid, "seq 1 has prev"},
		{"a payload with an unknown field", edit(second, func(m map[string]any) {
			m["data"].(map[string]any)["temperature"] = 0.2
		}), facts.ErrPayload, `unknown field "temperature"`},
		{"a payload field of the wrong type", edit(second, func(m map[string]any) {
			m["data"].(map[string]any)["prompt"] = 7
		}), facts.ErrPayload, "cannot unmarshal number"},
		{"a payload that is not an object", edit(second, func(m map[string]any) { m["data"] = "configured" }), facts.ErrPayload, "want a JSON object"},
		{"a payload missing a required field", func() string {
			d, err := facts.NewDraft(facts.KindQuestionAnswered, "c", facts.QuestionAnswered{RequestID: "q"})
			require.NoError(t, err)
			f := good[1]
			f.Kind, f.Data = d.Kind, d.Data
			return edit(rehash(f), func(m map[string]any) { delete(m["data"].(map[string]any), "request_id") })
		}(), facts.ErrPayload, "missing request_id"},
		{"an edited payload", edit(second, func(m map[string]any) {
			m["data"].(map[string]any)["model"] = "bigger"
		}), facts.ErrHashMismatch, "fact hashes to"},
		{"an edited cause", edit(second, func(m map[string]any) { m["cause"] = "transition/other" }), facts.ErrHashMismatch, ""},
		{"data that does not show data_msgpack", edit(second, func(m map[string]any) {
			m["data_msgpack"] = []byte{0x81, 0xa5, 'm', 'o', 'd', 'e', 'l', 0xa1, 'x'}
		}), facts.ErrPayload, "does not show the payload"},
		{"data_msgpack that does not fit", edit(second, func(m map[string]any) {
			delete(m, "data")
			m["data_msgpack"] = []byte{0x81, 0xa3, 'f', 'o', 'o', 0x01}
		}), facts.ErrPayload, "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			input := first + "\n" + tc.line + "\n" + second + "\n"
			out, err := facts.ParseJSON(strings.NewReader(input))
			require.Nil(t, out)
			var perr *facts.ParseError
			require.True(t, errors.As(err, &perr), "%v", err)
			require.Equal(t, 2, perr.Line)
			require.ErrorIs(t, err, tc.is)
			require.ErrorContains(t, err, "line 2: ")
			require.ErrorContains(t, err, tc.says)
		})
	}
}

func TestScanJSONStreamsAndStops(t *testing.T) {
	in := sampleFacts(t)
	var buf bytes.Buffer
	require.NoError(t, facts.WriteJSON(&buf, in...))
	buf.WriteString("not a fact\n")
	var got []facts.Fact
	var lastErr error
	for f, err := range facts.ScanJSON(&buf) {
		if err != nil {
			lastErr = err
			continue
		}
		got = append(got, f)
	}
	require.Equal(t, in, got, "every fact before the bad line is yielded")
	var perr *facts.ParseError
	require.ErrorAs(t, lastErr, &perr)
	require.Equal(t, len(in)+1, perr.Line)

	n := 0
	for range facts.ScanJSON(strings.NewReader(strings.Repeat("x\n", 5))) {
		n++
		break
	}
	require.Equal(t, 1, n)
}

func TestWriteJSONRefusesAnInvalidFact(t *testing.T) {
	f := goldenFact()
	f.Cause = ""
	var buf bytes.Buffer
	require.ErrorIs(t, facts.WriteJSON(&buf, f), facts.ErrInvalid)
}

func TestCollect(t *testing.T) {
	boom := errors.New("boom")
	a, b := facts.Fact{Thread: "t1", Seq: 1}, facts.Fact{Thread: "t1", Seq: 2}
	all, err := facts.Collect(func(yield func(facts.Fact, error) bool) {
		_ = yield(a, nil) && yield(b, nil)
	})
	require.NoError(t, err)
	require.Equal(t, []facts.Fact{a, b}, all)

	none, err := facts.Collect(func(func(facts.Fact, error) bool) {})
	require.NoError(t, err)
	require.NotNil(t, none, "an empty log is an empty list: JSON [] not null")

	part, err := facts.Collect(func(yield func(facts.Fact, error) bool) {
		_ = yield(a, nil) && yield(facts.Fact{}, boom) && yield(b, nil)
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, []facts.Fact{a}, part)
}
