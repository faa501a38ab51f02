package effect

// The deep interpreter. Typed recursion (the run closures) is fast but uses
// Go stack frames for every step of a chain. Once a goroutine is maxDepth
// frames deep, a chain hands itself to runDeep, which keeps the
// continuations on a heap slice instead: it descends through the chain
// nodes of Map, AndThen and CatchFail to the innermost effect that is not a
// chain, runs that one whole, then ascends, feeding the result to each node
// in turn, until a node returns a new chain to run in its place. A loop
// written as recursion through AndThen therefore runs in constant stack, and
// a chain a million steps long with a slice a million entries long.
//
// Values cross nodes as `any`, which costs an allocation per step for most
// types; that is the price of depth, paid only past maxDepth.

// chain is a Map, AndThen or CatchFail node seen without its success type.
type chain[S any] interface {
	// innerChain returns the chain of the inner effect, or nil when the
	// inner effect is not a chain.
	innerChain() chain[S]
	// runInner runs the inner effect whole and boxes its result; it is
	// called only when innerChain is nil.
	runInner(r *runner, s S) (any, *cause)
	// resume continues from the inner effect's end: the value v, or the
	// cause c when it did not succeed. It returns either a chain to run
	// next in this node's place, or this node's own result.
	resume(r *runner, s S, v any, c *cause) (next chain[S], rv any, rc *cause)
}

func runDeep[S, A any](r *runner, s S, start chain[S]) Exit[A] {
	var (
		stack []chain[S]
		v     any
		c     *cause
	)
	for cur := start; cur != nil; {
		for {
			stack = append(stack, cur)
			inner := cur.innerChain()
			if inner == nil {
				break
			}
			cur = inner
		}
		v, c = cur.runInner(r, s)
		cur = nil
		for cur == nil && len(stack) > 0 {
			top := stack[len(stack)-1]
			stack[len(stack)-1] = nil
			stack = stack[:len(stack)-1]
			cur, v, c = top.resume(r, s, v, c)
		}
	}
	if c != nil {
		return Exit[A]{c: c}
	}
	a, _ := v.(A)
	return Exit[A]{value: a}
}

// continueWith is how AndThen and CatchFail go on with the effect their
// function built: a chain is handed back to runDeep, anything else is run
// here, whole.
func continueWith[S, B any](r *runner, s S, next Effect[S, B]) (chain[S], any, *cause) {
	switch {
	case next.run == nil:
		return nil, nil, dieExit[B](ErrNilEffect).c
	case next.chain != nil:
		return next.chain, nil, nil
	}
	v, c := box(next.run(r, s))
	return nil, v, c
}

// box erases the success type of an Exit for the deep interpreter.
func box[A any](ex Exit[A]) (any, *cause) {
	if ex.c != nil {
		return nil, ex.c
	}
	return ex.value, nil
}
