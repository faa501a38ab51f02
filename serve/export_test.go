package serve

// Watchers is how many streams watch the thread now.
func (s *Server) Watchers(id string) int {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	if w := s.hub.threads[id]; w != nil {
		return w.watchers
	}
	return 0
}
