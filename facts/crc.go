package facts

import (
	"hash/crc32"
	"sync"
)

// castagnoli is the table of the records' checksum, CRC-32C.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// A record's checksum is computed on every write and checked on every
// read, and most records are a few hundred bytes: too short for
// hash/crc32's own three-stream path (504 bytes and up), which a single
// stream of CRC32 instructions runs at a third of the processor's speed,
// each instruction waiting for the last. Where the processor has them,
// checksum runs three streams side by side on those lengths too (see
// crcStreams) and joins their sums by the identity below; it sums the
// bytes left over, and records too short for three streams, in one
// stream without hash/crc32's dispatch. A record of crcLongest bytes or
// more is summed by hash/crc32 alone.
//
// On the register value r of the CRC (without the inversions Checksum
// applies at both ends), crc(r, A‖B) = crc(r, A) shifted over len(B)
// zero bytes, xor crc(0, B): the CRC is linear over GF(2) in register and
// data together. Shifting over a fixed n bytes is linear in r alone, so
// it is four lookups in tables made once: shift[j][v] is crc(v<<8j, n
// zero bytes). The method is the one hash/crc32 uses on amd64 for longer
// inputs (three streams joined by shift tables), here with blocks sized
// for records and a loop of its own.

const (
	// crcShortest is the shortest record summed in three streams: one
	// round of the small block. Shorter ones are summed in one.
	crcShortest = 3 * crcSmallBlock
	// crcLongest is where hash/crc32's own three streams take over.
	crcLongest = 504
	// crcSmallBlock and crcLargeBlock are the bytes of each stream in
	// one round (multiples of 8: the streams read 8 bytes at a time).
	crcSmallBlock = 64
	crcLargeBlock = 128
)

// crcShift is a table shifting a CRC register over a fixed number of
// zero bytes.
type crcShift [4][256]uint32

// shift returns r shifted over the table's zero bytes.
func (t *crcShift) shift(r uint32) uint32 {
	return t[0][r&0xff] ^ t[1][r>>8&0xff] ^ t[2][r>>16&0xff] ^ t[3][r>>24]
}

// newCRCShift makes the table shifting over n zero bytes.
func newCRCShift(n int) *crcShift {
	zeros := make([]byte, n)
	t := new(crcShift)
	for j := range t {
		for v := range 256 {
			r := uint32(v) << (8 * j)
			// crc32.Update takes and returns the inverted register.
			t[j][v] = ^crc32.Update(^r, castagnoli, zeros)
		}
	}
	return t
}

var (
	crcTablesOnce sync.Once // makes the two tables at the first use
	crcSmallShift *crcShift // over crcSmallBlock bytes
	crcLargeShift *crcShift // over crcLargeBlock bytes
)

// checksum returns crc32.Checksum(p, castagnoli), the record checksum.
func checksum(p []byte) uint32 {
	if !haveCRCStreams || len(p) >= crcLongest {
		return crc32.Checksum(p, castagnoli)
	}
	if len(p) < crcShortest {
		return ^crcUpdate(^uint32(0), p)
	}
	crcTablesOnce.Do(func() {
		crcSmallShift, crcLargeShift = newCRCShift(crcSmallBlock), newCRCShift(crcLargeBlock)
	})
	r := ^uint32(0) // the register Checksum starts from
	for len(p) >= 3*crcLargeBlock {
		a, b, c := crcStreams(r, &p[0], crcLargeBlock/8)
		r = crcLargeShift.shift(crcLargeShift.shift(a)^b) ^ c
		p = p[3*crcLargeBlock:]
	}
	for len(p) >= 3*crcSmallBlock {
		a, b, c := crcStreams(r, &p[0], crcSmallBlock/8)
		r = crcSmallShift.shift(crcSmallShift.shift(a)^b) ^ c
		p = p[3*crcSmallBlock:]
	}
	return ^crcUpdate(r, p)
}
