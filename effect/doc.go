// Package effect describes work as values and runs it at one edge.
//
// An [Effect] of type Effect[S, A] is a description of work that needs the
// services S and succeeds with a value of type A. Building an effect, mapping
// it, chaining it or wrapping it in [Retry], [Timeout], [Bracket] or
// [WithSpan] calls nothing: the description is inert until [Run] executes
// it, and a description may be run any number of times.
//
// [Run] returns an [Exit], which says how the run ended:
//
//   - success, with a value;
//   - Fail: an expected error (a 429 from a provider, a missing file). Only
//     a Fail is repeated by [Retry] and handled by [CatchFail];
//   - Die: a defect — a panic anywhere inside the run (including inside a
//     function given to [Map]) or an error marked with [Defect]. A defect is
//     never retried and passes through [CatchFail]; the panic value and its
//     stack are kept;
//   - Interrupt: the parent context was cancelled. An error returned by
//     work whose context was already cancelled counts as an interruption,
//     not a failure, so it is not retried either.
//
// Sixteen functions build effects: [Succeed], [Fail], [Die], [FromAsync],
// [Map], [AndThen], [CatchFail], [Retry], [Timeout], [WithSpan], [ZipPar],
// [All], [AllLimit], [Race], [Bracket] and [Provide]. Combinators that change the success type
// are functions rather than methods because Go methods cannot take type
// parameters.
//
// Concurrency is structured, in the manner of errgroup: every goroutine that
// [Timeout], [ZipPar], [All] or [Race] starts is awaited before the combinator
// returns, a failing side cancels its siblings, and a panic in such a
// goroutine becomes a Die instead of killing the process.
//
// Running is stack safe: long chains of [Map], [AndThen] and [CatchFail],
// whether built in a loop or by recursion, run with bounded Go stack. Short
// chains run as direct, typed calls; past a fixed depth the interpreter
// continues on a heap-allocated stack of continuations.
//
// Go cannot preempt a function that ignores its context. Cancellation,
// timeouts and sibling failures reach work through the context passed to
// [FromAsync]; a body that never looks at it delays the [Timeout], [Race] or
// [ZipPar] around it until it returns by itself.
package effect
