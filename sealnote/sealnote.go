package sealnote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/safegit"
	"github.com/seed-7cc7a084/harness/seal"
)

// Ref is the ref of the notes that hold seals.
const Ref = "refs/notes/harness-seals"

// The bounds of a read of Ref.
const (
	// MaxNotes bounds the notes read; past it the rest are not read
	// (Notes.Skipped).
	MaxNotes = 4096
	// MaxNoteBytes bounds a note: a larger one is not read, nor
	// appended to.
	MaxNoteBytes = 256 << 10
	// maxTotal bounds the bytes of all the notes read.
	maxTotal = 16 << 20
	// timeout bounds the git commands of a note's write or read.
	timeout = 20 * time.Second
)

// identity is who the notes' commits are by: harness, not whatever
// identity a planted config names.
var identity = []string{
	"GIT_AUTHOR_NAME=harness", "GIT_AUTHOR_EMAIL=harness@localhost",
	"GIT_COMMITTER_NAME=harness", "GIT_COMMITTER_EMAIL=harness@localhost",
}

// gitIn runs git through safegit in dir with extra environment, stdin,
// and at most limit bytes of standard output (truncated reports more).
func gitIn(ctx context.Context, dir string, extra []string, stdin []byte, limit int64, args ...string) (out []byte, truncated bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd, err := safegit.CommandEnv(ctx, dir, extra, args...)
	if err != nil {
		return nil, false, err
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &stderr, n: 4 << 10}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, false, err
	}
	if err := cmd.Start(); err != nil {
		return nil, false, fmt.Errorf("git %s: %w", args[0], err)
	}
	out, rerr := io.ReadAll(io.LimitReader(pipe, limit+1))
	if int64(len(out)) > limit {
		out, truncated = out[:limit], true
		cancel() // the rest is not read: git is stopped
	}
	werr := cmd.Wait()
	if truncated {
		return out, true, nil
	}
	if rerr != nil {
		return out, false, rerr
	}
	if werr != nil {
		return out, false, fmt.Errorf("git %s in %s: %w: %s", args[0], dir, werr, strings.TrimSpace(stderr.String()))
	}
	return out, false, nil
}

// limitedBuffer keeps the first n bytes written to it.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// head reads Ref in the repository of dir, not
// following it: its commit ("" when there is none), or ErrUnusable when
// it is symbolic or not a commit. repo is false when dir is in no git
// repository.
func head(ctx context.Context, dir string) (commit string, repo bool, err error) {
	if _, _, err := gitIn(ctx, dir, nil, nil, 4<<10, "rev-parse", "--git-dir"); err != nil {
		var ee interface{ ExitCode() int }
		if errors.As(err, &ee) || errors.Is(err, exec.ErrNotFound) {
			return "", false, nil // not a repository, or no git here
		}
		return "", false, err
	}
	// for-each-ref lists the refs below a name too (a planted
	// refs/notes/harness-seals/x): only the ref itself counts.
	out, _, err := gitIn(ctx, dir, nil, nil, 64<<10, "for-each-ref", "--format=%(refname) %(objectname) %(objecttype) %(symref)", Ref)
	if err != nil {
		return "", true, err
	}
	line := ""
	for l := range strings.Lines(string(out)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), Ref+" "); ok {
			line = rest
		}
	}
	if line == "" {
		// for-each-ref does not list a symbolic ref whose target is
		// missing: ask symbolic-ref too.
		if t, _, err := gitIn(ctx, dir, nil, nil, 4<<10, "symbolic-ref", "-q", Ref); err == nil {
			return "", true, fmt.Errorf("%s is a symbolic ref (to %s): %w", Ref, strings.TrimSpace(string(t)), ErrUnusable)
		}
		return "", true, nil
	}
	f := strings.Fields(line)
	switch {
	case len(f) == 3:
		return "", true, fmt.Errorf("%s is a symbolic ref (to %s): %w", Ref, f[2], ErrUnusable)
	case len(f) != 2 || f[1] != "commit":
		return "", true, fmt.Errorf("%s is not a commit (%s): %w", Ref, line, ErrUnusable)
	}
	return f[0], true, nil
}

// Write adds the seal e as a line of the note of Ref on
// the commit HEAD names in the git repository of dir (the workspace).
// It does nothing when dir is in no repository or HEAD has no commit
// yet (noted false). The note is made with plumbing, the ref moved from
// the commit it was read at (update-ref --no-deref): a ref changed
// meanwhile fails the write rather than losing a note.
func Write(ctx context.Context, dir string, e seal.Entry) (noted bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	old, repo, err := head(ctx, dir)
	if err != nil || !repo {
		return false, err
	}
	out, _, err := gitIn(ctx, dir, nil, nil, 4<<10, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	if err != nil {
		return false, nil // no commit yet: nothing to note on
	}
	head := strings.TrimSpace(string(out))
	line, err := json.Marshal(e)
	if err != nil {
		return false, err
	}
	tmp, err := os.MkdirTemp("", "harness-note-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	env := append([]string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}, identity...)
	run := func(stdin []byte, args ...string) (string, error) {
		out, _, err := gitIn(ctx, dir, env, stdin, 64<<10, args...)
		return strings.TrimSpace(string(out)), err
	}
	body := append(line, '\n')
	if old != "" {
		if _, err := run(nil, "read-tree", old); err != nil {
			return false, err
		}
		// The note of head may be at any fanout: ab/cdef…, ab/cd/ef…
		paths := []string{head}
		for i := 2; i <= 6; i += 2 {
			p := ""
			for j := 0; j < i; j += 2 {
				p += head[j:j+2] + "/"
			}
			paths = append(paths, p+head[i:])
		}
		ls, err := run(nil, append([]string{"ls-files", "-s", "--"}, paths...)...)
		if err != nil {
			return false, err
		}
		for l := range strings.Lines(ls) {
			// "100644 BLOB 0\tPATH"
			meta, path, ok := strings.Cut(strings.TrimSpace(l), "\t")
			f := strings.Fields(meta)
			if !ok || len(f) != 3 {
				continue
			}
			size, err := run(nil, "cat-file", "-s", f[1])
			if err != nil {
				return false, err
			}
			if n, _ := strconv.ParseInt(size, 10, 64); n > MaxNoteBytes {
				return false, fmt.Errorf("the note of %s on %s is %s bytes: %w", Ref, head[:12], size, ErrUnusable)
			}
			prev, _, err := gitIn(ctx, dir, env, nil, MaxNoteBytes, "cat-file", "blob", f[1])
			if err != nil {
				return false, err
			}
			if len(prev) > 0 && prev[len(prev)-1] != '\n' {
				prev = append(prev, '\n')
			}
			body = append(prev, body...)
			if _, err := run(nil, "update-index", "--force-remove", "--", path); err != nil {
				return false, err
			}
		}
	}
	blob, err := run(body, "hash-object", "-w", "--no-filters", "--stdin")
	if err != nil {
		return false, err
	}
	if _, err := run(nil, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+head); err != nil {
		return false, err
	}
	tree, err := run(nil, "write-tree")
	if err != nil {
		return false, err
	}
	args := []string{"commit-tree", tree, "-m", fmt.Sprintf("harness seal of %s at seq %d", e.Thread, e.Seq)}
	if old != "" {
		args = append(args, "-p", old)
	}
	commit, err := run(nil, args...)
	if err != nil {
		return false, err
	}
	zero := strings.Repeat("0", len(head))
	prev := old
	if prev == "" {
		prev = zero
	}
	if _, err := run(nil, "update-ref", "--no-deref", "-m", "harness seal", Ref, commit, prev); err != nil {
		return false, err
	}
	return true, nil
}

// Notes are the seals read from a repository's Ref.
type Notes struct {
	// Found are the entries, each named by the note it is in
	// (Found.Witness "git note refs/notes/harness-seals on COMMIT") and
	// its line there.
	Found []seal.Found
	// Skipped counts the notes not read: past MaxNotes, or larger
	// than MaxNoteBytes.
	Skipped int
}

// Read reads the seals in the notes of Ref of the git
// repository of dir (none when there is no repository or no such ref),
// within the bounds above. A ref that is symbolic or not a commit, or a
// line of a note that is not an entry, is an error wrapping ErrUnusable
// (the entries read before it are returned).
func Read(ctx context.Context, dir string) (Notes, error) {
	var sn Notes
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	commit, _, err := head(ctx, dir)
	if err != nil || commit == "" {
		return sn, err
	}
	// Every note: "<mode> blob <oid> <size>\t<path>", NUL-terminated.
	const lsLine = 200
	out, truncated, err := gitIn(ctx, dir, nil, nil, (MaxNotes+1)*lsLine, "ls-tree", "-r", "-z", "--long", commit)
	if err != nil {
		return sn, err
	}
	recs := bytes.Split(out, []byte{0})
	recs = recs[:len(recs)-1] // after the last NUL: nothing, or a record cut off
	if truncated {
		sn.Skipped++
	}
	type note struct{ blob, on string }
	var notes []note
	var total int64
	for _, r := range recs {
		meta, path, ok := strings.Cut(string(r), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 || f[1] != "blob" {
			continue
		}
		if len(notes) >= MaxNotes {
			sn.Skipped++
			continue
		}
		n, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil || n > MaxNoteBytes || total+n > maxTotal {
			sn.Skipped++
			continue
		}
		total += n + 128
		on := strings.ReplaceAll(path, "/", "")
		if !isObjectName(on) {
			continue // not a note: a note is named by the object it is on
		}
		notes = append(notes, note{blob: f[2], on: on})
	}
	if len(notes) == 0 {
		return sn, nil
	}
	var in bytes.Buffer
	for _, n := range notes {
		in.WriteString(n.blob + "\n")
	}
	out, _, err = gitIn(ctx, dir, nil, in.Bytes(), total, "cat-file", "--batch")
	if err != nil {
		return sn, err
	}
	r := bufio.NewReader(bytes.NewReader(out))
	for _, n := range notes {
		hdr, err := r.ReadString('\n')
		if err != nil {
			return sn, fmt.Errorf("read the notes of %s: %w", Ref, err)
		}
		f := strings.Fields(hdr)
		if len(f) != 3 || f[0] != n.blob {
			return sn, fmt.Errorf("read the notes of %s: unexpected %q", Ref, hdr)
		}
		size, _ := strconv.Atoi(f[2])
		body := make([]byte, size+1)
		if _, err := io.ReadFull(r, body); err != nil {
			return sn, fmt.Errorf("read the notes of %s: %w", Ref, err)
		}
		where := "git note " + Ref + " on " + n.on
		for i, l := range bytes.Split(body[:size], []byte("\n")) {
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			var e seal.Entry
			dec := json.NewDecoder(bytes.NewReader(l))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&e); err != nil {
				return sn, fmt.Errorf("%s line %d: not a seal: %v: %w", where, i+1, err, ErrUnusable)
			}
			sn.Found = append(sn.Found, seal.Found{Entry: e, Witness: where, Line: i + 1})
		}
	}
	return sn, nil
}

// isObjectName reports whether s is a full object name: 40 (SHA-1) or 64
// (SHA-256) lowercase hex digits.
func isObjectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
