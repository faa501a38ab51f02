package action

import (
	"io/fs"
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
// equals After. Each listed path also carries its [PathMode] on either
// side (BeforeMode, AfterMode): the full permission bits, so a listed file
// whose group or other bits changed along with its content says so, while
// a change of those bits alone, which the hash does not count, is not
// listed. Digests are those of [FileState.Digest], so they are also the
// keys under which [WithBlobs] kept the contents.
//
// The snapshots need not be sorted; neither is changed. Two snapshots a
// [Workspace] gave the [Boundary] are compared as trees: only directories
// whose digests differ are looked into.
func Diff(before, after Snapshot) []facts.PathChange {
	if before.tree != nil && after.tree != nil && before.Files == nil && after.Files == nil {
		return treeDiff(before.tree, after.tree)
	}
	b, a := sortedFiles(before.Listing()), sortedFiles(after.Listing())
	var out []facts.PathChange
	i, j := 0, 0
	for i < len(b) || j < len(a) {
		switch {
		case j == len(a) || (i < len(b) && b[i].Path < a[j].Path):
			out = append(out, facts.PathChange{Path: b[i].Path, Before: b[i].Digest, BeforeMode: PathMode(b[i].Mode)})
			i++
		case i == len(b) || a[j].Path < b[i].Path:
			out = append(out, facts.PathChange{Path: a[j].Path, After: a[j].Digest, AfterMode: PathMode(a[j].Mode)})
			j++
		default:
			if b[i].Digest != a[j].Digest || modeClass(b[i].Mode) != modeClass(a[j].Mode) {
				out = append(out, facts.PathChange{Path: a[j].Path, Before: b[i].Digest, After: a[j].Digest,
					BeforeMode: PathMode(b[i].Mode), AfterMode: PathMode(a[j].Mode)})
			}
			i++
			j++
		}
	}
	return out
}

// PathMode is the mode a [facts.PathChange] records for an entry of mode m:
// the permission bits (m.Perm()) of a regular file; 0, meaning not
// recorded, for anything else — a symlink, whose permission bits mean
// nothing on most systems and cannot be set — and for a regular file with
// no permission bits at all, which is also what an observer that reports
// no modes leaves in [FileState.Mode], and so not a mode to restore.
func PathMode(m fs.FileMode) uint32 {
	if !m.IsRegular() {
		return 0
	}
	return uint32(m.Perm())
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
