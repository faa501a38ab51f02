// Package model is the Model service: what takes one model turn of a
// thread. A [Model] is given the conversation derived from the log and
// returns a [Decision] — text, one or more tool calls, or a question for a
// person — with the tokens it used.
//
// [Scripted] reads its decisions from a JSON Lines file, the Nth line for
// the Nth model turn of a thread, so a resumed thread gets the same answers
// and a test or a demo needs no network. Real providers come later.
//
// Errors carry a class ([Error], [Classify]) that says what the failure
// means for the next step: a transient one (a 429 or a 503) is retried, the
// others are recorded and escalated.
package model
