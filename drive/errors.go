package drive

import "errors"

// ErrBadPrompt: a prompt read for a thread is empty, or over MaxPrompt.
var ErrBadPrompt = errors.New("bad prompt")

// ErrNoBound: a raise of a budget adds to a bound the budget does not
// have (dollars on a budget in tokens alone, or any amount where there is
// no budget): it would change nothing, and the thread would wait again.
var ErrNoBound = errors.New("the budget has no such bound")

// ErrCallEnded: an answer to an MCP server's question whose call is in
// doubt or has ended: no answer can reach the server.
var ErrCallEnded = errors.New("the call that asked is in doubt or has ended")
