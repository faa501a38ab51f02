// Package model is the Model service: what takes one model turn of a
// thread. A [Model] is given the conversation derived from the log and
// returns a [Decision] — text, one or more tool calls, or a question for a
// person — with the tokens it used.
//
// [Scripted] reads its decisions from a JSON Lines file, the Nth line for
// the Nth model turn of a thread, so a resumed thread gets the same answers
// and a test or a demo needs no network. The real providers live in their
// own packages, so that this one, and the runtime that imports it, link no
// vendor SDK: model/openai (an OpenAI-compatible chat completions API:
// OpenAI, or a local model through Ollama, llama.cpp's server or vLLM) and
// model/anthropic (Anthropic's messages API). Both read the same [Options],
// stream through [Streamer], offer the [AskTool] pseudo-tool, send the
// conversation [Paired], and keep the exact bytes of each [Exchange] for
// audit.
//
// Errors carry a class ([Error], [Classify]) that says what the failure
// means for the next step: a transient one (a 429, a 503, a stream cut off
// before the turn was complete) is retried — after the wait the server
// asked for, when it asked one ([RetryAfter]) — and the others are
// recorded and escalated.
package model
