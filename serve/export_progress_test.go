package serve

import "github.com/seed-7cc7a084/harness/drive"

// ProgressOf is the Progress the server gives a drive of the thread id:
// for tests that play a run's events without a run.
func ProgressOf(s *Server, id string) drive.Progress { return s.live.progress(id) }
