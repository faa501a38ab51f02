package thread

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// ChildID is the id of the child a thread spawns for the call ref:
// "<parent>.<ref>", or, where that is not a valid thread id or too long
// (a deep tree), the parent's id shortened and a digest of both. It is
// derived from the log alone, so a spawn run again names the same child.
func ChildID(parent, ref string) string {
	id := parent + "." + ref
	if ValidateID(id) == nil {
		return id
	}
	sum := sha256.Sum256([]byte(parent + "\x00" + ref))
	head := parent
	if len(head) > 64 {
		head = head[:64]
	}
	head = strings.TrimRight(head, ".")
	return head + "." + hex.EncodeToString(sum[:12])
}
