// Package providertest is the test kit of the model providers: fake
// servers that speak each provider's wire format (OpenAI's chat
// completions, Anthropic's messages — OpenAI and Anthropic), and the suite
// every provider passes (Run). It imports nothing above the model
// packages; the end-to-end suite that runs threads through the runtime
// against these fakes is the runtime's own test (harness).
package providertest
