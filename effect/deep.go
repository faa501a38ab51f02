package effect

// The deep interpreter. Typed recursion (the run methods) is fast but uses
// one Go stack frame per step of a chain. Once a goroutine is maxDepth
// frames deep, a chain node hands itself to runDeep, which keeps the
// continuations on a heap slice instead: it splits chain nodes into their
// inner node and a frame (descend), runs the innermost node whole, then
// feeds the result to the frames (ascend) until one of them returns a new
// node to run in its place. A loop written as recursion through AndThen
// therefore runs in constant stack, and a chain a million steps long in a
// slice a million frames long.
//
// Values cross frames as `any`, which costs an allocation per step for most
// types; that is the price of depth, paid only past maxDepth.

// anyNode is a node seen without its success type.
type anyNode[S any] interface {
	// split returns the inner node and the frame that continues from its
	// result, or (nil, nil) for a node that is run whole.
	split() (anyNode[S], frame[S])
	// runAny runs the node whole, with typed recursion, and boxes the result.
	runAny(r *runner, s S) (any, *cause)
}

// frame continues a chain once its inner node has ended with the value v
// or the cause c (exactly one is meaningful: c is nil on success). It
// returns either a node to run next, or the value and cause to hand to the
// frame below it.
type frame[S any] interface {
	resume(r *runner, v any, c *cause) (next anyNode[S], rv any, rc *cause)
}

func runDeep[S, A any](r *runner, s S, start anyNode[S]) Exit[A] {
	var (
		stack []frame[S]
		v     any
		c     *cause
	)
	for cur := start; cur != nil; {
		for {
			inner, f := cur.split()
			if f == nil {
				break
			}
			stack = append(stack, f)
			cur = inner
		}
		v, c = cur.runAny(r, s)
		cur = nil
		for cur == nil && len(stack) > 0 {
			f := stack[len(stack)-1]
			stack[len(stack)-1] = nil
			stack = stack[:len(stack)-1]
			cur, v, c = f.resume(r, v, c)
		}
	}
	if c != nil {
		return Exit[A]{c: c}
	}
	a, _ := v.(A)
	return Exit[A]{value: a}
}

// box erases the success type of an Exit for the deep interpreter.
func box[A any](ex Exit[A]) (any, *cause) {
	if ex.c != nil {
		return nil, ex.c
	}
	return ex.value, nil
}
