// Package rewind takes a thread's work back: Fork copies a thread's log
// up to a seq into a new thread ("what if it had been denied"), and Undo
// puts the workspace files a thread's actions changed back as they were,
// from the contents the runtime's observer kept — planned first
// (PlanUndo), refused whole when a file changed since, and recorded as a
// workspace.restored fact. The changes undone are the ones the thread's
// view says the runtime observed, not the ones a tool claimed.
package rewind
