package serve

import (
	"context"

	"github.com/seed-7cc7a084/harness/drive"
)

// DriveProgress is where a drive of thread root in the server's process
// that is not the server's own resume (a worker's: see package worker)
// shows what it does: the same streams as the server's resumes (see
// liveHub). held is the context that holds root: once it ends, the hub
// lets go of what it kept of the thread, as at the end of a resume.
func (s *Server) DriveProgress(held context.Context, root string) drive.Progress {
	context.AfterFunc(held, func() { s.live.done(root) })
	return s.live.progress(root)
}
