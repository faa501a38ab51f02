package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/facts"
)

// methodElicit is the method of a server's question.
const methodElicit = "elicitation/create"

// keptDefaults takes out of a server's requested schema every default
// harness does not show a person (facts.ElicitKeptDefaults), before the
// go-sdk client reads it: the client fills the schema's defaults into an
// accepted answer's content, so a default left in would reach the server
// as the person's input though nobody was shown it. The defaults kept
// are shown, and filled in by harness itself (the answer recorded holds
// them). A schema that cannot be read is left for the client to refuse.
func keptDefaults(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != methodElicit {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*sdk.ElicitParams)
		if !ok || p == nil || p.RequestedSchema == nil {
			return next(ctx, method, req)
		}
		raw, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return next(ctx, method, req)
		}
		kept, changed, err := facts.ElicitKeptDefaults(raw)
		if err != nil {
			return nil, err
		}
		if changed {
			p.RequestedSchema = json.RawMessage(kept)
		}
		return next(ctx, method, req)
	}
}
