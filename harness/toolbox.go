package harness

// With returns a new toolbox of b's tools followed by more, checked as
// NewToolbox checks them: a name taken twice — a built-in one included —
// is an error naming it, and b is left as it was. A nil b is the empty
// toolbox.
func (b *Toolbox) With(more ...ToolAdapter) (*Toolbox, error) {
	var tools []ToolAdapter
	if b != nil {
		tools = append(tools, b.tools...)
	}
	return NewToolbox(append(tools, more...)...)
}
