package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/present"
)

// PreviewBytes is the most of a file Preview reads to diff it, and the
// longest content it diffs; a larger one is summarized by its size and
// SHA-256, never cut.
const PreviewBytes = 32 << 20

// Preview shows what a write_file or edit_file call would change in the
// workspace at root, as a unified diff of the file as it is now against
// the file the call would leave. Other tools have no preview (""); a call
// that would not apply says why. Preview only reads, inside root.
//
// A preview is never a part of the truth: when a file or a content is
// larger than PreviewBytes, when the lines that differ are too many to
// diff, or when the diff is longer than a person can read, the preview
// says so and gives both sides' sizes and SHA-256 digests (and the diff's
// hunk count, when it was computed) instead of a diff.
//
// A file larger than the workspace observer's hash limit
// ([action.DefaultHashLimit], 1 GiB) is never opened: the observer knows
// it by its stat record alone (see [facts.StatDigestPrefix]), and the
// preview says its size, that its content was not read, and that the
// write replaces it. A file at or below the limit is read at most to the
// limit. PreviewWithin is Preview for an observer given another limit
// ([action.WithHashLimit], [action.Workspace.HashLimit]).
//
// Control characters in the file, the new content or the path are shown
// escaped (see present.EscapeText), so that a line cannot hide itself or another
// on the terminal that shows the diff to a person who must approve it.
func Preview(root, tool, args string) string {
	return present.EscapeText(preview(root, tool, args, action.DefaultHashLimit))
}

// PreviewWithin returns Preview for a workspace whose observer hashes
// files up to hashLimit bytes (see [action.WithHashLimit]): a larger file
// is never opened. A limit below 1 is taken as 1.
func PreviewWithin(hashLimit int64) func(root, tool, args string) string {
	hashLimit = max(hashLimit, 1)
	return func(root, tool, args string) string {
		return present.EscapeText(preview(root, tool, args, hashLimit))
	}
}

func preview(root, tool, args string, hashLimit int64) string {
	var path, after string
	switch tool {
	case MergeWorktree:
		return mergePreview(root, args)
	case WriteFile:
		var a struct{ Path, Content string }
		if err := json.Unmarshal([]byte(args), &a); err != nil || a.Path == "" {
			return "(no preview: the arguments do not name a path and content)"
		}
		path, after = a.Path, a.Content
	case EditFile:
		var a struct{ Path, Old, New string }
		if err := json.Unmarshal([]byte(args), &a); err != nil || a.Path == "" {
			return "(no preview: the arguments do not name a path and an edit)"
		}
		before, err := readIn(root, a.Path, hashLimit)
		if err != nil {
			return "(no preview: " + err.Error() + ")"
		}
		if !before.Whole {
			return fmt.Sprintf("(no preview: %s is %s, more than the %d bytes a preview reads)", present.EscapeLine(a.Path), before.DiffSide, PreviewBytes)
		}
		switch n := strings.Count(before.text, a.Old); {
		case a.Old == "" || n == 0:
			return "(the edit does not apply: the old text is not in " + present.EscapeLine(a.Path) + ")"
		case n > 1:
			return fmt.Sprintf("(the edit does not apply: the old text occurs %d times in %s)", n, present.EscapeLine(a.Path))
		}
		path, after = a.Path, strings.Replace(before.text, a.Old, a.New, 1)
	default:
		return ""
	}
	before, err := readIn(root, path, hashLimit)
	if err != nil {
		return "(no preview: " + err.Error() + ")"
	}
	shown := present.EscapeLine(path)
	from := "a/" + shown
	if !before.Existed {
		from = "/dev/null"
	}
	to := "b/" + shown
	if !before.Existed && after == "" {
		// An empty file where there is none is a change: the file is made.
		return "(creates " + shown + ", empty)"
	}
	if before.NoDigest != "" {
		why := fmt.Sprintf("not diffed: %s is known by its size alone, its content was not read; the write replaces all of it", shown)
		return present.DiffSummary(from, to, why, before.DiffSide, present.SideOf(after))
	}
	if !before.Whole || len(after) > PreviewBytes {
		why := fmt.Sprintf("not diffed: larger than the %d bytes a preview reads", PreviewBytes)
		return present.DiffSummary(from, to, why, before.DiffSide, present.SideOf(after))
	}
	if before.text == after {
		return "(no change: " + shown + " already holds this content)"
	}
	return present.UnifiedDiff(from, to, before.text, after)
}

// side is one side of a preview: a file as it is, or the content a call
// would leave, with its text when it was read whole.
type side struct {
	present.DiffSide
	text string
}

// readIn reads rel inside root; a missing file reads as absent. Only a
// regular file is read, opened without blocking (a FIFO named by the model
// must not hang the preview a person waits for). A file larger than
// hashLimit is not opened (its size is from its stat record; should a
// larger file take its name between that look and the open, it is not
// read either); of any other at most hashLimit+1 bytes are read, at most
// PreviewBytes kept, and the side says whether that was all. Its size and
// digest are of the whole file.
func readIn(root, rel string, hashLimit int64) (side, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return side{}, err
	}
	defer r.Close()
	unread := func(size int64) side {
		return side{DiffSide: present.DiffSide{Existed: true, Size: size,
			NoDigest: fmt.Sprintf("content not read: larger than %d bytes, the observer's hash limit", hashLimit)}}
	}
	if info, err := r.Stat(rel); err == nil && info.Mode().IsRegular() && info.Size() > hashLimit {
		return unread(info.Size()), nil
	}
	f, info, err := action.OpenRegular(r, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return side{DiffSide: present.DiffSide{Whole: true, SHA256: present.SideOf("").SHA256}}, nil
	}
	if err != nil {
		return side{}, err
	}
	defer f.Close()
	if info.Size() > hashLimit {
		return unread(info.Size()), nil
	}
	var kept bytes.Buffer
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(h, &prefixKeeper{buf: &kept, limit: PreviewBytes}), io.LimitReader(f, hashLimit+1))
	if err != nil {
		return side{}, err
	}
	s := side{DiffSide: present.DiffSide{Existed: true, Size: n, Whole: n <= PreviewBytes}}
	if n > hashLimit {
		// It grew past the limit while it was read: its end was not.
		s = unread(n)
		if info, err := f.Stat(); err == nil {
			s.Size = max(n, info.Size())
		}
		return s, nil
	}
	s.SHA256 = hex.EncodeToString(h.Sum(nil))
	if s.Whole {
		s.text = kept.String()
		s.Lines = strings.Count(s.text, "\n")
		if s.text != "" && !strings.HasSuffix(s.text, "\n") {
			s.Lines++ // a last line without a newline
		}
	}
	return s, nil
}

// prefixKeeper keeps the first limit bytes written to it, and takes the rest.
type prefixKeeper struct {
	buf   *bytes.Buffer
	limit int
}

func (c *prefixKeeper) Write(p []byte) (int, error) {
	if room := c.limit - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
