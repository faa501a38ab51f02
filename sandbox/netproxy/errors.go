package netproxy

import (
	"errors"
	"fmt"
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
