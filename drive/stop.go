package drive

import (
	"context"

	"github.com/seed-7cc7a084/harness/harness"
)

// Stop stops the thread as a person's word (by, and why): nothing more
// runs in it, and the children it waits on are stopped. When another
// process (a run in a terminal, a server, a worker) or another runtime
// of this one drives the thread, the stop is asked of it through the log
// and it cuts off what it runs — a command gets SIGTERM, then SIGKILL
// 500 ms later, recorded as interrupted with what was observed — and
// records the stop; Stop returns once it has let go (see
// harness.Thread.Stop). It returns how the thread then stands.
func Stop(ctx context.Context, th *harness.Thread, by, reason string) (State, error) {
	if _, err := th.Stop(ctx, by, reason); err != nil {
		return State{Thread: th.ID()}, err
	}
	return Inspect(ctx, th)
}
