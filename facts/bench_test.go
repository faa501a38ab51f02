package facts_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed-7cc7a084/harness/facts"
)

// benchFact is a model turn whose stored record is about 400 bytes.
func benchFact(b *testing.B) facts.Fact {
	d, err := facts.NewDraft(facts.KindModelTurn, "infer/turn/12", facts.ModelTurn{
		Turn:      12,
		Text:      strings.Repeat("Reading auth.go to find where the session expires. ", 4),
		ToolCalls: []facts.ToolCall{{ID: "call_0012", Name: "read", Args: `{"path":"internal/auth/session.go"}`}},
		Usage:     facts.Usage{InputTokens: 18234, OutputTokens: 211},
	})
	require.NoError(b, err)
	return facts.Fact{Thread: "bench", Seq: 12345, Kind: d.Kind, Cause: d.Cause, At: time.Now().UTC(), Data: d.Data, Prev: facts.Hash{1}}
}

// msgpackFact is the baseline: the same fact as one generic msgpack value.
type msgpackFact struct {
	Seq   uint64 `msgpack:"seq"`
	Kind  string `msgpack:"kind"`
	Cause string `msgpack:"cause"`
	At    int64  `msgpack:"at"`
	Prev  []byte `msgpack:"prev"`
	Data  []byte `msgpack:"data"`
}

// BenchmarkDecodeFact reads a stored fact's envelope (DecodeFact: checksum,
// envelope, a copy of the payload bytes) against msgpack-decoding the same
// fields, payload left as bytes, in the same run. ratio above 1 means
// faster than msgpack.
func BenchmarkDecodeFact(b *testing.B) {
	f := benchFact(b)
	ours, err := facts.Encode(f)
	require.NoError(b, err)
	theirs, err := msgpack.Marshal(msgpackFact{f.Seq, string(f.Kind), f.Cause, f.At.UnixNano(), f.Prev[:], f.Data})
	require.NoError(b, err)

	var oursT, theirsT time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += 1000 {
		n := min(1000, b.N-done)
		start := time.Now()
		for range n {
			if _, err := facts.DecodeFact("bench", ours); err != nil {
				b.Fatal(err)
			}
		}
		oursT += time.Since(start)
		b.StopTimer()
		start = time.Now()
		for range n {
			var m msgpackFact
			if err := msgpack.Unmarshal(theirs, &m); err != nil {
				b.Fatal(err)
			}
		}
		theirsT += time.Since(start)
		b.StartTimer()
	}
	b.ReportMetric(float64(theirsT.Nanoseconds())/float64(b.N), "msgpack-ns/op")
	b.ReportMetric(theirsT.Seconds()/oursT.Seconds(), "ratio")
}

// BenchmarkDecodePayload decodes a ~335-byte model.turn payload with
// facts.Decode against a plain msgpack.Unmarshal into the same type.
func BenchmarkDecodePayload(b *testing.B) {
	f := benchFact(b)
	var oursT, theirsT time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += 1000 {
		n := min(1000, b.N-done)
		start := time.Now()
		for range n {
			if _, err := facts.Decode[facts.ModelTurn](f); err != nil {
				b.Fatal(err)
			}
		}
		oursT += time.Since(start)
		b.StopTimer()
		start = time.Now()
		for range n {
			var m facts.ModelTurn
			if err := msgpack.Unmarshal(f.Data, &m); err != nil {
				b.Fatal(err)
			}
		}
		theirsT += time.Since(start)
		b.StartTimer()
	}
	b.ReportMetric(float64(theirsT.Nanoseconds())/float64(b.N), "msgpack-ns/op")
	b.ReportMetric(theirsT.Seconds()/oursT.Seconds(), "ratio")
}

// BenchmarkHash hashes a ~400-byte fact (what an append does per fact and
// Verify per fact read).
func BenchmarkHash(b *testing.B) {
	f := benchFact(b)
	b.ReportAllocs()
	for b.Loop() {
		f.Hash()
	}
}
