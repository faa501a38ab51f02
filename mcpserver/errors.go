package mcpserver

import "errors"

// ErrTooManySubscriptions: a session asked to subscribe to more than
// maxSubscriptions resources.
var ErrTooManySubscriptions = errors.New("too many subscriptions: unsubscribe from some first")

// ErrBadCursor: a list's cursor is not one this server gave.
var ErrBadCursor = errors.New("not a cursor this server gave")

// ErrNoRequest: a prompt names a thread that waits for nothing.
var ErrNoRequest = errors.New("no open request")

// ErrNoRules: an answer carries an "always" rule, and the workspace
// keeps none (Opened.AnswerPending is nil).
var ErrNoRules = errors.New("this workspace keeps no always-rules: approve without one")

// ErrNotHere: a rule for the project came with an answer to a thread
// that works in another workspace than the server's.
var ErrNotHere = errors.New("a rule for a project is kept from a thread of that project")
