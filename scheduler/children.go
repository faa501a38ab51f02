package scheduler

// Children returns the delegations of the whole thread that spawned a
// child (Reading.Children), in order, without a reading of every other
// call: a verifier of a long log asks for them once it has folded it.
func (s *Scheduler[S]) Children() ([]Call, error) {
	st := s.whole()
	if s.err != nil {
		return nil, s.err
	}
	var out []Call
	for _, c := range st.all {
		if c.child != nil && !c.child.Refused() {
			out = append(out, c.reading())
		}
	}
	return out, nil
}
