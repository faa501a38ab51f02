package facts

import "errors"

// MCPPrompt names the MCP server's prompt a user message was made from
// (a person chose it: harness run --mcp-prompt): the server, its prompt,
// and the digest of the arguments given (sha256 of their JSON object;
// the arguments themselves may be secrets and are not kept). The text
// is the server's, as it answered prompts/get.
type MCPPrompt struct {
	Server string `msgpack:"server" json:"server"`
	Prompt string `msgpack:"prompt" json:"prompt"`
	Args   string `msgpack:"args,omitempty" json:"args,omitempty"`
}

// Validate requires the server and the prompt.
func (p MCPPrompt) Validate() error {
	if p.Server == "" || p.Prompt == "" {
		return errors.New("an MCP prompt names its server and prompt")
	}
	return nil
}
