package netproxy

import (
	"bufio"
	"bytes"
	"io"
	"sync"
)

// copyBufSize is the buffer the bulk of a large body goes through, from
// the host's connection to the command's: each read takes all the host's
// socket holds, up to this, and writes it on in one piece. Measured on
// loopback (BenchmarkProxy1MiB), this is faster than splicing between
// the sockets or copying through 32 KiB: 512 KiB took a 1 MiB response
// from about 1.6 times a direct fetch to about 1.1.
const copyBufSize = 512 << 10

// copyBufs holds buffers of copyBufSize, taken for one body at a time:
// at most one per open connection (MaxOpen) is ever in use.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// writers holds the buffered writers of relayBufSize a response's head,
// chunk lines and small bodies are written through. One holds a head and
// all the host's reader holds with it, so that they go out in one write.
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, relayBufSize) }}

// getWriter is a writer of relayBufSize onto w; putWriter gives it back.
func getWriter(w io.Writer) *bufio.Writer {
	bw := writers.Get().(*bufio.Writer)
	bw.Reset(w)
	return bw
}

// smallWriters hold the writers of smallBufSize that a body of no
// declared length (to the host's close) goes through as Response.Write
// copies it: the writer is written out only when full, so it is kept
// small, as it was, not to hold more of a stream back.
var smallWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, smallBufSize) }}

// smallBufSize is the size of smallWriters' writers.
const smallBufSize = 32 << 10

// getSmallWriter is a writer of smallBufSize onto w; putWriter gives it
// back.
func getSmallWriter(w io.Writer) *bufio.Writer {
	bw := smallWriters.Get().(*bufio.Writer)
	bw.Reset(w)
	return bw
}

func putWriter(bw *bufio.Writer) {
	bw.Reset(nil)
	if bw.Size() == smallBufSize {
		smallWriters.Put(bw)
		return
	}
	writers.Put(bw)
}

// relayData relays n bytes of a response's body from the host to the
// command, after what bw holds already (the head, a chunk's size line),
// which goes out with them: what the host's reader has buffered, through
// bw (flushed by the caller, or here when more is to come); then, when
// the host has more to send, bw is written out and the rest read from the
// host's connection into a buffer of copyBufSize and written to the
// command's (out) as it comes. short is the error for a host that ends
// the body before n bytes; an error writing to the command is returned
// as it is.
func relayData(out *counter, bw *bufio.Writer, up *upstream, n int64, short error) error {
	if k := min(int64(up.br.Buffered()), n); k > 0 {
		b, _ := up.br.Peek(int(k))
		if _, err := bw.Write(b); err != nil {
			return err
		}
		_, _ = up.br.Discard(int(k))
		n -= k
	}
	if n == 0 {
		return nil
	}
	// The rest is still to come from the host: what bw holds goes out
	// first, so that the command is not kept waiting on the host's pace
	// for what has come (a stream, a download's progress).
	if err := bw.Flush(); err != nil {
		return err
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	for n > 0 {
		k, rerr := up.c.Read(buf[:min(n, int64(len(buf)))])
		if k > 0 {
			if _, err := out.Write(buf[:k]); err != nil {
				return err
			}
			n -= int64(k)
		}
		if rerr != nil && n > 0 {
			if rerr == io.EOF {
				return short
			}
			return rerr
		}
	}
	return nil
}

// awaitHost writes out what bw holds when br does not hold what is read
// next — need bytes, or a whole line when need is 0 — so that the command
// is not kept waiting while the host is.
func awaitHost(bw *bufio.Writer, br *bufio.Reader, need int) error {
	b, _ := br.Peek(br.Buffered())
	if (need > 0 && len(b) >= need) || (need == 0 && bytes.IndexByte(b, '\n') >= 0) {
		return nil
	}
	return bw.Flush()
}
