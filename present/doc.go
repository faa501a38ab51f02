// Package present is the one rendering of a thread's facts for people:
// Describe says in one line what a fact records, and every string that
// reaches a terminal from a log — a model's text, a tool's arguments, a
// path, a command's output — goes through EscapeLine, EscapeText or a
// Writer first, so that nothing the model wrote can move the cursor,
// conceal text, rewrite a line or reorder what a person reads. DiffOf is
// the one rendering of a path an action changed, for the terminal and the
// page alike. It imports only facts: a front end of any kind (the
// command line, a web page, an auditor's script) renders facts the same
// way.
package present
