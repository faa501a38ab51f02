package scheduler

// HeldFrom is the index of the first fact s's log still holds in order
// (0 until it released any).
func HeldFrom[S any](s *Scheduler[S]) int { return s.log.held() }
