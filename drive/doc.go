// Package drive takes a thread on for a person or a front end: it says
// where the thread stands (Inspect, from the thread's one view, as the
// one State document every front end gives), lists a store's threads
// (List), runs a thread until it is done or waits for someone (Drive),
// answers the confirmations a Policy decides (Approval, a mode and
// patterns, or a Go policy: PolicyFunc; ApplyPolicy) and posts a person's Reply — the one way a person's word
// becomes an answer fact — so that giving one twice is harmless and a
// contradiction is refused (Answer, AnswerAll, AnswerPending). A thread's approval
// policy is a fact of the thread (policy.set: SetPolicy, ThreadPolicy),
// which Drive follows (Options.FollowPolicy). Stop stops a thread
// wherever it runs (the process that drives it cuts off what it runs),
// and WatchAnswer lets a prompt see its request answered elsewhere: the
// log, not the prompt, decides. The command line is one
// such front end; a web page or a chat bot is another, and needs nothing
// the command has.
//
// A front end holds a harness.Thread and passes it to every call: the
// thread's log is then folded once, and each look or resume goes on from
// where the last one read. An action that started and has no completion
// is in doubt only when nobody holds the thread (harness.Free); while a
// runtime holds it, it is running.
package drive
