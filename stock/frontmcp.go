package stock

import (
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/present"
)

// WarnMCP tells the person, a line each, which of the session's MCP
// servers could not be started or reached: their tools are not offered.
func (f *Front) WarnMCP(s *Session) {
	if s == nil || s.Stock == nil || s.Stock.MCP == nil {
		return
	}
	for _, st := range s.Stock.MCP.Status() {
		if st.State != mcp.Connected {
			f.warn("MCP server %s (%s) %s: %s; its tools are not offered (harness mcp list shows the servers)",
				st.Name, present.EscapeLine(st.Endpoint), st.State, present.EscapeLine(st.Error))
		}
	}
}
