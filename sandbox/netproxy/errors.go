package netproxy

import (
	"errors"
	"fmt"
	"io"
)

// Errors, tested with errors.Is.
var (
	// ErrRule: an allow-list entry that cannot be read (see ParseRule).
	ErrRule = errors.New("invalid network allow-list rule")
	// ErrClosed: Serve was called on a Proxy already closed.
	ErrClosed = errors.New("network proxy closed")
)

// errHeaderTooLong: a request's line and headers went past MaxHeader.
var errHeaderTooLong = fmt.Errorf("request headers longer than %d bytes", MaxHeader)

// errBadChunk: a host's chunked response body is not well formed.
var errBadChunk = errors.New("malformed chunked response body")

// errShortChunk: a host's connection ended inside a chunk's data.
var errShortChunk = fmt.Errorf("%w: %w", errBadChunk, io.ErrUnexpectedEOF)

// errShortBody: a host's connection ended before the Content-Length of
// its response's body.
var errShortBody = fmt.Errorf("the host's response body ended early: %w", io.ErrUnexpectedEOF)
