// Package model is the Model service: what takes one model turn of a
// thread. A [Model] is given the conversation derived from the log and
// returns a [Decision] — text, one or more tool calls, or a question for a
// person — with the tokens it used.
//
// [Scripted] reads its decisions from a JSON Lines file, the Nth line for
// the Nth model turn of a thread, so a resumed thread gets the same answers
// and a test or a demo needs no network. [Open] also reaches real
// providers: an OpenAI-compatible chat completions API (OpenAI, or a local
// model through Ollama, llama.cpp's server or vLLM) and Anthropic's
// messages API, with tool calls both ways, usage, streaming, and the exact
// bytes of each exchange kept for audit.
//
// Errors carry a class ([Error], [Classify]) that says what the failure
// means for the next step: a transient one (a 429 or a 503) is retried, the
// others are recorded and escalated.
package model
