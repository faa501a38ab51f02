package mcpserver

import "errors"

// ErrTooManySubscriptions: a session asked to subscribe to more than
// maxSubscriptions resources.
var ErrTooManySubscriptions = errors.New("too many subscriptions: unsubscribe from some first")

// ErrBadCursor: a list's cursor is not one this server gave.
var ErrBadCursor = errors.New("not a cursor this server gave")

// ErrNoRequest: a prompt names a thread that waits for nothing.
var ErrNoRequest = errors.New("no open request")
