package facts_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// FuzzDecodeFact feeds the storage decoder arbitrary bytes, both as they are
// and with a valid checksum appended so the fuzzer reaches past the frame.
// DecodeFact must fail cleanly or return a fact that re-encodes, survives
// the JSON codec if its payload fits, and never panics anything downstream.
func FuzzDecodeFact(f *testing.F) {
	for _, fact := range roundTripFacts(f) {
		b, err := facts.Encode(fact)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)-4])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		framed := binary.LittleEndian.AppendUint32(bytes.Clone(b), crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
		for _, in := range [][]byte{b, framed} {
			fact, err := facts.DecodeFact("t", in)
			if err != nil {
				if !errors.Is(err, facts.ErrCorrupt) && !errors.Is(err, facts.ErrVersion) {
					t.Fatalf("error wraps neither ErrCorrupt nor ErrVersion: %v", err)
				}
				continue
			}
			again, err := facts.Encode(fact)
			require.NoError(t, err)
			back, err := facts.DecodeFact("t", again)
			require.NoError(t, err)
			require.Equal(t, fact, back)

			if d := decoders[fact.Kind]; d != nil {
				_, _ = d(fact)
			}
			if facts.CheckPayload(fact.Kind, fact.Data) != nil {
				continue
			}
			line, err := json.Marshal(fact)
			require.NoError(t, err)
			var parsed facts.Fact
			require.NoError(t, json.Unmarshal(line, &parsed), string(line))
			require.Equal(t, fact, parsed)
		}
	})
}

// FuzzParseJSON feeds the JSON Lines parser arbitrary text. It must refuse
// cleanly with a *ParseError, or return facts that write back to text that
// parses to the same facts, and that survive the storage codec.
func FuzzParseJSON(f *testing.F) {
	var buf bytes.Buffer
	if err := facts.WriteJSON(&buf, roundTripFacts(f)...); err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		f.Add([]byte(line))
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		fs, err := facts.ParseJSON(bytes.NewReader(data))
		if err != nil {
			var perr *facts.ParseError
			require.ErrorAs(t, err, &perr)
			require.GreaterOrEqual(t, perr.Line, 1)
			return
		}
		var out bytes.Buffer
		require.NoError(t, facts.WriteJSON(&out, fs...))
		again, err := facts.ParseJSON(&out)
		require.NoError(t, err, out.String())
		require.Equal(t, fs, again)
		for _, fact := range fs {
			b, err := facts.Encode(fact)
			require.NoError(t, err)
			back, err := facts.DecodeFact(fact.Thread, b)
			require.NoError(t, err)
			require.Equal(t, fact, back)
		}
	})
}
