package action

import "strings"

// A repository's metadata (".git") and a store (".harness") are not
// workspace content, but some of what they hold decides what runs later:
// a git config can name a program (core.fsmonitor, core.hooksPath,
// filters), a hook is one, a "commondir" or a nested ".git" redirects git
// to a config of the writer's choosing, and a ".harness/project.json" is
// settings the next run reads. So an observation enters both, and leaves
// out only what git and the store write in their ordinary work. The rules,
// for a path below the innermost ".git" or ".harness" directory on it:
//
// Below a ".git" directory (the "git dir"), these are working data and
// not observed:
//
//   - at its top: the directories objects/, refs/, logs/, rr-cache/ and
//     lost-found/, whole (never entered); the files HEAD, ORIG_HEAD,
//     FETCH_HEAD, MERGE_HEAD, MERGE_MSG, MERGE_MODE, MERGE_RR,
//     MERGE_AUTOSTASH, AUTO_MERGE, CHERRY_PICK_HEAD, REVERT_HEAD,
//     REBASE_HEAD, BISECT_* , index, sharedindex.*, packed-refs,
//     COMMIT_EDITMSG, TAG_EDITMSG, SQUASH_MSG, NOTES_EDITMSG, shallow,
//     gc.pid and gc.log;
//   - below modules/ and worktrees/ (the git dirs of submodules and of
//     linked worktrees, whose names may hold "/"): a file named as one of
//     the files above, and any file with an objects, refs, logs or
//     rr-cache directory on its path — but every directory there is
//     entered, so that a control file (below) is found wherever it is;
//   - anywhere: a file whose name ends in ".lock" (git's lock files; what
//     a lock becomes when git renames it is observed under its own name).
//
// A nested repository's HEAD (in a ".git" below the top of the workspace)
// is observed too: it is what makes git take the directory for a
// repository, so a new one is an effect even before it has a config.
//
// Observed anyway, wherever they are: a file named config,
// config.worktree, commondir or gitdir, and anything with a hooks
// directory on its path. Everything else below a git dir is observed:
// config, description, hooks/, info/, modules/*/config, a planted
// commondir, a rebase's todo list (rebase-merge/, which can hold exec
// lines), the sequencer's, and whatever git does not know. A ".git" that
// is a file or a link (a worktree's or a submodule's "gitdir: …") is
// observed as any file or link is, at any depth.
//
// Below a ".harness" directory (a store, or what would be read as one),
// the store's own files are not observed: its database (db/, whole) and
// its search index (search/, whole: derived from the database, rebuilt at
// will, and never trusted over it).
// Everything else — project.json, config.json, .gitignore, a serve.json,
// anything a command creates — is observed (a server's socket, token and
// log live in the user's runtime directory, never here). A ".harness" that is a file or a link is observed as one.

// guard is the kind of metadata directory a path lies in.
type guard uint8

const (
	guardNone  guard = iota // workspace content
	guardGit                // below a ".git" directory
	guardStore              // below a ".harness" directory
)

// guardOf returns the metadata directory the path rel (slash-separated)
// lies in: the innermost ".git" or ".harness" among its parent
// directories, rel's path below it, and whether that directory is at the
// top of the workspace.
func guardOf(rel string) (g guard, sub string, top bool) {
	start := 0
	for i := 0; i <= len(rel); i++ {
		if i < len(rel) && rel[i] != '/' {
			continue
		}
		if i == len(rel) {
			break // the last name is the entry itself
		}
		switch rel[start:i] {
		case ".git":
			g, sub, top = guardGit, rel[i+1:], start == 0
		case ".harness":
			g, sub, top = guardStore, rel[i+1:], start == 0
		}
		start = i + 1
	}
	return g, sub, top
}

// isGuarded reports whether a snapshot path lies in a metadata directory
// or is one (a ".git" or ".harness" file or link).
func isGuarded(rel string) bool {
	if !strings.Contains(rel, ".git") && !strings.Contains(rel, ".harness") {
		return false
	}
	for part := range strings.SplitSeq(rel, "/") {
		if part == ".git" || part == ".harness" {
			return true
		}
	}
	return false
}

// gitDataDirs are the directories at the top of a git dir that hold only
// working data.
var gitDataDirs = map[string]bool{"objects": true, "refs": true, "logs": true, "rr-cache": true, "lost-found": true}

// gitDataFiles are the files of a git dir that git writes in its ordinary
// work and that never name a program.
var gitDataFiles = map[string]bool{
	"HEAD": true, "ORIG_HEAD": true, "FETCH_HEAD": true, "MERGE_HEAD": true, "MERGE_MSG": true,
	"MERGE_MODE": true, "MERGE_RR": true, "MERGE_AUTOSTASH": true, "AUTO_MERGE": true,
	"CHERRY_PICK_HEAD": true, "REVERT_HEAD": true, "REBASE_HEAD": true, "index": true,
	"packed-refs": true, "COMMIT_EDITMSG": true, "TAG_EDITMSG": true, "SQUASH_MSG": true,
	"NOTES_EDITMSG": true, "shallow": true, "gc.pid": true, "gc.log": true,
}

// gitControlFiles are the names observed wherever they are below a git
// dir: what tells git where its config is, or is one.
var gitControlFiles = map[string]bool{"config": true, "config.worktree": true, "commondir": true, "gitdir": true}

// isGitDataFile reports whether name is one of git's working files.
func isGitDataFile(name string) bool {
	return gitDataFiles[name] || strings.HasPrefix(name, "BISECT_") || strings.HasPrefix(name, "sharedindex.")
}

// hasPart reports whether the slash-separated path p has a component for
// which is returns true.
func hasPart(p string, is func(string) bool) bool {
	for part := range strings.SplitSeq(p, "/") {
		if is(part) {
			return true
		}
	}
	return false
}

// gitWorkingData reports whether sub, a path below a git dir, is git's
// working data, out of the observation (see the rules above). dir says
// whether it is a directory.
func gitWorkingData(sub string, dir bool) bool {
	base := sub[strings.LastIndexByte(sub, '/')+1:]
	if !dir && strings.HasSuffix(base, ".lock") {
		return true
	}
	if !dir && gitControlFiles[base] {
		return false
	}
	if hasPart(sub, func(p string) bool { return p == "hooks" }) {
		return false
	}
	first, rest, below := strings.Cut(sub, "/")
	switch {
	case first == "modules" || first == "worktrees":
		if dir || !below {
			return false
		}
		return isGitDataFile(base) || hasPart(rest, func(p string) bool { return gitDataDirs[p] && p != "lost-found" })
	case gitDataDirs[first]:
		return true
	case !below:
		return !dir && isGitDataFile(first)
	}
	return false
}

// storeOwn reports whether sub, a path below a ".harness" directory, is
// the store's own: its database, or its search index. (A server's socket, token and log live in
// the user's runtime directory, not in the store, so a serve.json or
// serve.log written under .harness is content like any other.)
func storeOwn(sub string) bool {
	first, _, _ := strings.Cut(sub, "/")
	return first == "db" || first == "search"
}
