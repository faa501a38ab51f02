// Package action is the effect boundary: how a request to change the
// world becomes a record that keeps apart what the worker reported, what the
// runtime observed, what that means for the effect, and what a declared
// check says.
//
// "The agent said done" is three questions, not one. For every effectful
// action the log keeps, side by side:
//
//  1. the request (action.requested), recorded before anything runs;
//  2. the authority: a capability the thread was not granted ends the
//     action as denied, and the adapter is not invoked;
//  3. action.started, with the runtime's own observation before, appended
//     immediately before the adapter is invoked. When that reading
//     differs from the thread's last observation (Boundary.Since), the
//     workspace changed while no action of the thread ran — a person, a
//     process, a server never called: a workspace.changed record (by
//     unknown, with the changed paths) goes first, in the same append, so
//     the change is never folded into the action's observation;
//  4. the adapter's report: its status, its claimed resulting state, its
//     transcript and output. A panic or an error becomes a failed report;
//  5. the runtime's own observation after, through an [Observer] the
//     adapter does not control, with the changed paths;
//  6. action.completed: the report and the observation side by side, and
//     the effect state derived from the observation alone — reported
//     (nobody could look), observed (the observed scope changed), unknown
//     (success reported, nothing changed: report and reading disagree) or
//     none (failure or denial reported, nothing changed). A claimed state
//     never fills an observation field;
//  7. check.recorded: the declared check's verdict (pass or fail, with the
//     reason) about its bound target — a criterion, not a judgement that
//     the work was right.
//
// The sandbox is part of the boundary. An adapter that runs a command
// (run_command) runs it in the sandbox its request recorded
// (action.requested's sandbox: mode, network, writable roots, what is
// read-only and hidden, the environment's allow-list; see package
// sandbox): the command can never reach the store, so it cannot append a
// fact only a person may append (an answer, a reconciliation); nor the
// harness's own processes, their environment or a person's terminal; and
// what it writes outside its writable roots is refused by the kernel, not
// merely unobserved. Where no sandbox can run, a command does not run
// unless mode off was chosen, and that choice is in the record too.
//
// An unknown effect is open: a person settles it with effect.reconciled
// (accept, retry, abandon). A process that dies between action.started and
// action.completed leaves the action in doubt; it is never run again by
// itself. A run cancelled while the adapter works ends the action as
// interrupted (Finish, Ended.Interrupted): the adapter stopped, the
// runtime observed, and no check ran — the caller's cancel is not the
// action's failure. A declared check must name a registered check
// with arguments its validator takes (ValidateCheck, RegisterCheckArgs):
// a call that declares another, or malformed arguments, is refused when
// it is requested, before anyone is asked. A check is given the
// adapter's report (CheckEnv.Report) but decides from its bound target.
package action
