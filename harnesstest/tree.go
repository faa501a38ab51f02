package harnesstest

import (
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
)

// DelegateScript: the parent delegates a write to a child (p.1-d1 for a
// parent p), which asks for its confirmation, writes and says done; the
// parent then says done.
const DelegateScript = `{"text": "Delegating.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Set the TTL to 300\",\"tools\":[\"write_file\",\"read_file\"]}"}]}
{"text": "The child set it."}
{"thread": "1-d1", "text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"cache.toml\"}"}]}
{"thread": "1-d1", "text": "Done: the TTL is 300."}`

// NewDelegating is New with an actor that delegates: the stock tree and
// a Delegate part composing each child's actor the stock way.
func NewDelegating(t T, script string, opts ...harness.Option) *Env {
	t.Helper()
	e := New(t, script, opts...)
	var err error
	e.Actor, err = harness.Compose(e.RT.Config, harness.System(), harness.Tools(e.Toolbox), harness.Budget(), harness.Compact(),
		harness.Infer(harness.Scheduler()), harness.Delegate(nil))
	require.NoError(t, err)
	return e
}
