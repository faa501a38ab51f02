package mcp

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sampling: harness does not declare it, and refuses a server's
// sampling/createMessage with an error that says why — the server's
// settings do not allow it (Server.Sampling), or they do and this harness
// does not run such a turn yet — instead of the bare "not supported" a
// client without it answers.

// methodSampling is the method of a server's request for a model turn.
const methodSampling = "sampling/createMessage"

// codeRejected is the error code of a refused request for a model turn,
// as the specification's example of a rejected sampling request gives it.
const codeRejected = -1

// refuseSampling is the client's receiving middleware that answers a
// server's request for a model turn with the refusal.
func (s *conn) refuseSampling(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != methodSampling {
			return next(ctx, method, req)
		}
		return nil, &jsonrpc.Error{Code: codeRejected, Message: s.samplingRefusal()}
	}
}

// samplingRefusal says why the server's request for a model turn is
// refused.
func (s *conn) samplingRefusal() string {
	if s.cfg.Sampling {
		return fmt.Sprintf("harness refuses sampling: the settings allow the MCP server %q a model turn (\"sampling\": true), but this harness does not run one for a server yet", s.name)
	}
	return fmt.Sprintf("harness refuses sampling: the MCP server %q is not allowed a model turn; a person allows it with \"sampling\": true in the server's entry of their own settings or of a project file they trusted", s.name)
}
