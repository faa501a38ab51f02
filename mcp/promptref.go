package mcp

import (
	"fmt"
	"strings"
)

// ParsePromptRef reads a reference to a server's prompt, SERVER/PROMPT
// (as Client.Prompts lists them), and its arguments, each NAME=VALUE: a
// reference without both names is ErrPromptRef, an argument without a
// name or given twice ErrPromptArgs. Whether the server has the prompt,
// and the prompt those arguments, Client.Prompt says.
func ParsePromptRef(ref string, args []string) (server, name string, values map[string]string, err error) {
	server, name, ok := strings.Cut(ref, "/")
	if !ok || server == "" || name == "" {
		return "", "", nil, fmt.Errorf("%q: %w", ref, ErrPromptRef)
	}
	values = map[string]string{}
	for _, kv := range args {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return "", "", nil, fmt.Errorf("%q: %w: want NAME=VALUE", kv, ErrPromptArgs)
		}
		if _, dup := values[k]; dup {
			return "", "", nil, fmt.Errorf("%s given twice: %w", k, ErrPromptArgs)
		}
		values[k] = v
	}
	return server, name, values, nil
}
