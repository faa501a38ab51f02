package serve

import (
	"net/http"

	"github.com/seed-7cc7a084/harness/drive"
)

// PlanRequest switches a thread's plan mode (POST /api/threads/ID/plan):
// on or off from its next model turn, by the token's person.
type PlanRequest struct {
	On drive.YesNo `json:"on"`
}

// PlanResult says what a switch did: where the plan.mode_set is in the
// log, or that the thread was so already (Duplicate, nothing appended).
type PlanResult struct {
	Thread    string `json:"thread"`
	On        bool   `json:"on"`
	Seq       uint64 `json:"seq"`
	Duplicate bool   `json:"duplicate"`
	By        string `json:"by"`
}

// apiPlan switches the thread's plan mode (drive.SetPlanMode). It does
// not resume the thread: the switch takes effect at its next turn.
// Acting on a plan is an answer (POST /api/threads/ID/answer, kind plan).
func (s *Server) apiPlan(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	var req PlanRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		return err
	}
	if !req.On.Said() {
		return badRequest("say whether plan mode is on (on: true or false)")
	}
	who, _ := IdentityOf(r.Context())
	c := s.cachedThread(r.Context(), id)
	c.mu.Lock()
	p, err := drive.SetPlanMode(r.Context(), c.th, req.On == drive.Yes, who.Name)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if p.Duplicate {
		status = http.StatusOK
	}
	return writeJSON(w, status, PlanResult{Thread: id, On: req.On == drive.Yes, Seq: p.Seq, Duplicate: p.Duplicate, By: who.Name})
}
