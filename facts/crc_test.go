package facts

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
	"time"
)

// TestChecksumIsCRC32C checks checksum against hash/crc32 on every length
// up to past where hash/crc32's own streams take over, at every alignment
// of the first byte in a word, on random bytes and on runs of one byte
// (zeros and ones, where a wrong shift table would hide or show).
func TestChecksumIsCRC32C(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 2*crcLongest+16)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	ones := make([]byte, len(buf))
	for i := range ones {
		ones[i] = 0xff
	}
	zeros := make([]byte, len(buf))
	for _, src := range [][]byte{buf, ones, zeros} {
		for off := range 8 {
			for n := 0; n <= 2*crcLongest; n++ {
				p := src[off : off+n]
				if got, want := checksum(p), crc32.Checksum(p, castagnoli); got != want {
					t.Fatalf("checksum of %d bytes at offset %d = %08x, want %08x", n, off, got, want)
				}
			}
		}
	}
}

// TestChecksumStreamsRun checks that the three-stream path is the one
// this machine takes, where it can, so the test above tests it.
func TestChecksumStreamsRun(t *testing.T) {
	if !haveCRCStreams {
		t.Skip("no three-stream checksum on this machine")
	}
	p := make([]byte, 3*crcSmallBlock)
	a, b, c := crcStreams(^uint32(0), &p[0], crcSmallBlock/8)
	if a == 0 && b == 0 && c == 0 {
		t.Fatal("crcStreams returned nothing")
	}
	// The second and third streams start from 0 and read zeros: they
	// stay 0; the first does not.
	if b != 0 || c != 0 || a == 0 {
		t.Fatalf("crcStreams over zeros = %08x %08x %08x", a, b, c)
	}
}

func FuzzChecksum(f *testing.F) {
	f.Add([]byte("a record"))
	f.Add(make([]byte, 400))
	f.Fuzz(func(t *testing.T, p []byte) {
		if got, want := checksum(p), crc32.Checksum(p, castagnoli); got != want {
			t.Fatalf("checksum of %d bytes = %08x, want %08x", len(p), got, want)
		}
	})
}

// BenchmarkChecksum sums a 420-byte record, the size of a model turn's,
// with checksum and with hash/crc32 alone in the same run, in blocks;
// ratio is hash/crc32's time over checksum's (ns/op counts both).
func BenchmarkChecksum(b *testing.B) {
	p := make([]byte, 420)
	for i := range p {
		p[i] = byte(i * 7)
	}
	var sink uint32
	var ours, std time.Duration
	const rounds = 1000
	b.ResetTimer()
	for done := 0; done < b.N; done += rounds {
		n := min(rounds, b.N-done)
		start := time.Now()
		for range n {
			sink += checksum(p)
		}
		ours += time.Since(start)
		start = time.Now()
		for range n {
			sink += crc32.Checksum(p, castagnoli)
		}
		std += time.Since(start)
	}
	b.StopTimer()
	if sink == 1 {
		b.Log(sink)
	}
	b.ReportMetric(std.Seconds()/ours.Seconds(), "ratio")
	b.ReportMetric(float64(std.Nanoseconds())/float64(b.N), "crc32-ns/op")
}
