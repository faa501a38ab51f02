package tell

import (
	"io"

	"github.com/seed-7cc7a084/harness/stock"
)

// Replayed tells the end of a thread's replay r, once its record was
// told: its children's tree and, with verify, whether the log verified
// (Verified) and what its seals say (Seals, with nameKey), and then the
// tree's size. It reports whether they hold: false is a failure, said.
func Replayed(w io.Writer, r stock.Replayed, verify bool, nameKey string, paint Paint) bool {
	if r.Err == nil {
		Tree(w, r.Tree.Children, "", paint)
	}
	if !verify {
		return true
	}
	verified := Verified(w, r.Tree.Audit, r.Verify, paint)
	if sealed := Seals(w, r.Seals, r.SealsErr, nameKey, paint); !sealed || !verified {
		return false
	}
	if len(r.Tree.Children) > 0 {
		TreeVerified(w, TreeSize(r.Tree.Children), paint)
	}
	return true
}
