package action

import (
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
)

// Diff is the inventory between two observations: every path whose entry
// differs, sorted by path, with its digest before and after.
//
//   - added: Before is "", After the new digest;
//   - removed: Before the old digest, After is "";
//   - modified: both digests.
//
// A path is modified when its digest changed or its mode class did (see
// [Workspace]: regular, executable, symlink) — exactly what the workspace
// hash counts, so Diff is empty when the two hashes are equal. A change of
// mode alone (chmod +x, or a file replaced by a symlink whose target string
// hashes like the file's content) shows as a modified path whose Before
// equals After; the modes themselves are in the snapshots' FileState.Mode.
// Digests are those of [FileState.Digest], so they are also the keys under
// which [WithBlobs] kept the contents.
//
// The snapshots need not be sorted; neither is changed.
func Diff(before, after Snapshot) []facts.PathChange {
	b, a := sortedFiles(before.Files), sortedFiles(after.Files)
	var out []facts.PathChange
	i, j := 0, 0
	for i < len(b) || j < len(a) {
		switch {
		case j == len(a) || (i < len(b) && b[i].Path < a[j].Path):
			out = append(out, facts.PathChange{Path: b[i].Path, Before: b[i].Digest})
			i++
		case i == len(b) || a[j].Path < b[i].Path:
			out = append(out, facts.PathChange{Path: a[j].Path, After: a[j].Digest})
			j++
		default:
			if b[i].Digest != a[j].Digest || modeClass(b[i].Mode) != modeClass(a[j].Mode) {
				out = append(out, facts.PathChange{Path: a[j].Path, Before: b[i].Digest, After: a[j].Digest})
			}
			i++
			j++
		}
	}
	return out
}

func byPath(x, y FileState) int { return strings.Compare(x.Path, y.Path) }

// sortedFiles returns files sorted by path, copying only when they are not.
func sortedFiles(files []FileState) []FileState {
	if slices.IsSortedFunc(files, byPath) {
		return files
	}
	files = slices.Clone(files)
	slices.SortStableFunc(files, byPath)
	return files
}
