// Package openai is the model.Model of an OpenAI-compatible chat
// completions API: OpenAI itself, or a local model served through Ollama,
// llama.cpp's llama-server or vLLM. A [Model] sends the conversation and
// the tools, returns the model's text, tool calls or question with the
// tokens it used, streams text as it arrives ([Model.Stream], or
// model.WithStream), and keeps the exact bytes of each exchange for audit.
//
// Failures carry a class (see model.CallError): a 429 or a 5xx, and a
// stream cut off before the turn is complete, are transient, with the wait
// the server asked for (model.RetryAfter); the others say what to check.
//
// It is the only package of the harness that imports OpenAI's SDK, so a
// program that links package model, or the runtime, links no vendor SDK.
package openai
