//go:build !amd64 || purego

package facts

// haveCRCStreams is false: checksum leaves every length to hash/crc32.
const haveCRCStreams = false

// crcStreams is never called where haveCRCStreams is false.
func crcStreams(r uint32, p *byte, words int) (a, b, c uint32) {
	panic("facts: crcStreams without SSE4.2")
}

// crcUpdate is never called where haveCRCStreams is false.
func crcUpdate(r uint32, p []byte) uint32 {
	panic("facts: crcUpdate without SSE4.2")
}
