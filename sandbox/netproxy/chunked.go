package netproxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// relayBufSize is the buffer a response is written to the command
// through: its head, chunk lines and small chunks go out in one write
// each, not a write per piece. It holds a head (at most MaxHeader, and
// room) and all a host's reader may hold besides, so that they go out in
// one write, not two (1 MiB through the proxy: about a tenth less wall
// time against a buffer of 32 KiB, measured side by side).
const relayBufSize = 2 * (MaxHeader + headSlack)

// maxChunkLine bounds a chunk-size line, and maxTrailer the trailer
// section after the last chunk (read and dropped: Trailer, which
// announces it, is a hop-by-hop header the proxy does not pass on).
const (
	maxChunkLine = 4096
	maxTrailer   = MaxHeader
)

// chunkedBody says whether resp's body is relayed by relayChunked: a
// body that is chunked and nothing else, on a response that has one.
func chunkedBody(req *http.Request, resp *http.Response) bool {
	return len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked" &&
		req.Method != http.MethodHead && resp.StatusCode >= 200 &&
		resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified
}

// relayChunked writes resp's head to the command, then its chunked body
// as read from the host's connection: each chunk-size line parsed and
// written anew (extensions dropped), each chunk's data as it is — what
// the host's reader holds, then the rest of a large chunk straight from
// the connection (see relayData) rather than decoded and encoded again
// through buffers of 32 KiB, a write per piece. The command gets well-formed chunks only: a body that is not
// (a size that is not hex, too large, a line too long, data not followed
// by CRLF, a trailer too long) ends the relay with errBadChunk, and the
// command's connection with it.
func relayChunked(out *counter, resp *http.Response, up *upstream) error {
	resp.Header.Del("Content-Length")
	resp.Header.Del("Transfer-Encoding")
	if resp.Close {
		resp.Header.Set("Connection", "close")
	}
	bw := getWriter(out)
	defer putWriter(bw)
	fmt.Fprintf(bw, "HTTP/%d.%d %s\r\n", resp.ProtoMajor, resp.ProtoMinor, resp.Status)
	if err := resp.Header.Write(bw); err != nil {
		return err
	}
	bw.WriteString("Transfer-Encoding: chunked\r\n\r\n")
	for {
		if err := awaitHost(bw, up.br, 0); err != nil {
			return err
		}
		size, err := chunkSize(up.br)
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "%x\r\n", size)
		if size == 0 {
			if err := skipTrailer(up.br); err != nil {
				return err
			}
			bw.WriteString("\r\n")
			return bw.Flush()
		}
		if err := relayData(out, bw, up, size, errShortChunk); err != nil {
			return err
		}
		if err := awaitHost(bw, up.br, 2); err != nil {
			return err
		}
		var crlf [2]byte
		if _, err := io.ReadFull(up.br, crlf[:]); err != nil {
			return fmt.Errorf("%w: %w", errBadChunk, err)
		}
		if crlf != [2]byte{'\r', '\n'} {
			return fmt.Errorf("%w: chunk data not followed by CRLF", errBadChunk)
		}
		bw.WriteString("\r\n")
	}
}

// chunkSize reads a chunk-size line: hex digits (at most 15: a size
// that fits an int64 with room), then optional whitespace and extensions
// (";name=value", ignored), then CRLF (or LF, as net/http takes it).
func chunkSize(br *bufio.Reader) (int64, error) {
	line, err := readLine(br, maxChunkLine)
	if err != nil {
		return 0, err
	}
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimRight(line, " \t")
	if len(line) == 0 || len(line) > 15 {
		return 0, fmt.Errorf("%w: chunk size %q", errBadChunk, clip(string(line)))
	}
	n, err := strconv.ParseInt(string(line), 16, 64)
	if err != nil || n < 0 || strings.ContainsAny(string(line), "+-xX_") {
		return 0, fmt.Errorf("%w: chunk size %q", errBadChunk, clip(string(line)))
	}
	return n, nil
}

// skipTrailer reads the trailer section after the last chunk, through
// the empty line that ends it, at most maxTrailer bytes.
func skipTrailer(br *bufio.Reader) error {
	total := 0
	for {
		line, err := readLine(br, maxChunkLine)
		if err != nil {
			return err
		}
		if len(line) == 0 {
			return nil
		}
		if total += len(line) + 2; total > maxTrailer {
			return fmt.Errorf("%w: trailer longer than %d bytes", errBadChunk, maxTrailer)
		}
	}
}

// readLine reads one line of at most max bytes, without its CRLF or LF.
// The slice is valid until br is read again.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		b, err := br.ReadSlice('\n')
		if len(line)+len(b) > max+2 {
			return nil, fmt.Errorf("%w: a line longer than %d bytes", errBadChunk, max)
		}
		switch {
		case err == nil:
			if line != nil {
				b = append(line, b...)
			}
			b = b[:len(b)-1]
			return bytes.TrimSuffix(b, []byte{'\r'}), nil
		case err == bufio.ErrBufferFull:
			line = append(line, b...)
		default:
			return nil, fmt.Errorf("%w: %w", errBadChunk, err)
		}
	}
}
