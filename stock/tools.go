package stock

import "github.com/seed-7cc7a084/harness/harness"

// WithTools offers more tools after the built-in ones (and before an MCP
// server's), keeping everything else the stock harness is: the sandbox
// that hides the store, the observer and its stat cache, the delegating
// actor. Each call of theirs is an action through the effect boundary
// like any other. A name the built-in tools (or another) already take
// makes NewStock fail, naming it. Given more than once, the tools add up.
func WithTools(tools ...harness.ToolAdapter) Option {
	return func(o *stockOptions) { o.tools = append(o.tools, tools...) }
}
