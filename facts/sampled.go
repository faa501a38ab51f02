package facts

import (
	"errors"
	"fmt"
)

// KindModelSampled: an MCP server asked for a turn of the thread's model
// (sampling/createMessage) during a call of one of its tools, and the
// runtime ran it (ModelSampled). It is appended while the action runs,
// under the action's own cause (see scheduler.SampleCause); the budget
// counts its tokens and cost as it counts a model turn's. It is no turn
// of the thread's conversation: nothing of it is shown to the thread's
// model.
const KindModelSampled Kind = "model.sampled"

func init() {
	register[ModelSampled](KindModelSampled)
}

// MaxSampledSystem bounds the server's system prompt a model.sampled
// records (and the runtime sends), in bytes.
const MaxSampledSystem = 16 << 10

// ModelSampled is the payload of model.sampled: which server asked, during
// which action, what it sent (the messages by count, size and digest, the
// system prompt whole), what it was granted, and the model's answer with
// its tokens and cost. A turn whose model call failed records the failure
// (Class, Error) and no answer.
type ModelSampled struct {
	// ActionID is the action whose call the request came in; Server the
	// MCP server's name in the settings.
	ActionID string `msgpack:"action_id,omitempty" json:"action_id,omitempty"`
	Server   string `msgpack:"server,omitempty" json:"server,omitempty"`
	// N counts the action's sampling requests, from 1; Turn counts the
	// thread's sampling turns, from 1 (what a scripted model is asked).
	N    int `msgpack:"n,omitempty" json:"n,omitempty"`
	Turn int `msgpack:"turn,omitempty" json:"turn,omitempty"`
	// Messages and Bytes are how many messages the server sent and their
	// text's size; Digest is the SHA-256 of the messages as the model was
	// sent them (JSON of their roles and texts, in order).
	Messages int    `msgpack:"messages,omitempty" json:"messages,omitempty"`
	Bytes    int64  `msgpack:"bytes,omitempty" json:"bytes,omitempty"`
	Digest   string `msgpack:"digest,omitempty" json:"digest,omitempty"`
	// System is the server's system prompt, as sent.
	System string `msgpack:"system,omitempty" json:"system,omitempty"`
	// AskedMaxTokens is the bound the server asked for; MaxTokens the
	// one the turn ran with (at most the settings' cap).
	AskedMaxTokens int64 `msgpack:"asked_max_tokens,omitempty" json:"asked_max_tokens,omitempty"`
	MaxTokens      int64 `msgpack:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	// IncludeContext is what the server asked to include of the
	// conversation ("thisServer", "allServers"); the runtime includes
	// none of it.
	IncludeContext string `msgpack:"include_context,omitempty" json:"include_context,omitempty"`
	// Text is the model's answer, returned to the server.
	Text string `msgpack:"text,omitempty" json:"text,omitempty"`
	// Dropped counts the tool calls (and a question) the model answered
	// with: none is passed on, none runs.
	Dropped    int       `msgpack:"dropped,omitempty" json:"dropped,omitempty"`
	Usage      Usage     `msgpack:"usage,omitempty" json:"usage,omitzero"`
	Cost       *TurnCost `msgpack:"cost,omitempty" json:"cost,omitempty"`
	Model      string    `msgpack:"model,omitempty" json:"model,omitempty"`
	StopReason string    `msgpack:"stop_reason,omitempty" json:"stop_reason,omitempty"`
	// Class and Error say why the model call failed, when it did.
	Class ErrorClass `msgpack:"class,omitempty" json:"class,omitempty"`
	Error string     `msgpack:"error,omitempty" json:"error,omitempty"`
}

// Validate requires the action, the server and the counts, and usage that
// is not below zero.
func (p ModelSampled) Validate() error {
	var errs []error
	errs = append(errs, required("action_id", p.ActionID), required("server", p.Server))
	if p.N < 1 || p.Turn < 1 {
		errs = append(errs, fmt.Errorf("n %d and turn %d count from 1", p.N, p.Turn))
	}
	if p.Messages < 0 || p.Bytes < 0 || p.MaxTokens < 0 || p.AskedMaxTokens < 0 || p.Dropped < 0 {
		errs = append(errs, errors.New("a count below zero"))
	}
	if len(p.System) > MaxSampledSystem {
		errs = append(errs, fmt.Errorf("a system prompt of %d bytes, over %d", len(p.System), MaxSampledSystem))
	}
	errs = append(errs, p.Usage.Validate())
	return errors.Join(errs...)
}

// Spend is what the sampling turn cost, in tokens and (priced) dollars.
func (p ModelSampled) Spend() Spend {
	s := Spend{Tokens: p.Usage.InputTokens + p.Usage.OutputTokens}
	if p.Cost != nil {
		s.USD = p.Cost.USD
	}
	return s
}
