//go:build !purego

package facts

import "golang.org/x/sys/cpu"

// haveCRCStreams is whether crcStreams can run: it uses SSE4.2's CRC32.
var haveCRCStreams = cpu.X86.HasSSE42

// crcStreams sums three streams of words 8-byte words each, side by
// side: the first from p with register r, the second and third, which
// follow it, from register 0. It returns the three registers.
//
//go:noescape
func crcStreams(r uint32, p *byte, words int) (a, b, c uint32)

// crcUpdate returns register r updated over p, one stream.
//
//go:noescape
func crcUpdate(r uint32, p []byte) uint32
