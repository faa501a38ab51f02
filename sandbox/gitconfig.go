package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/safegit"
)

// NamedPath is a path a git config the person's git reads for the
// workspace names, where git then reads or runs what is there: the hooks
// directory core.hooksPath names, or a config file an include names.
type NamedPath struct {
	// Path is the absolute path as named: a relative core.hooksPath
	// taken against the worktree's root, as git takes it (the
	// workspace's, or the enclosing repository's), a relative include
	// against the directory of the config that names it, "~/" as the
	// home directory and "~user/" as that user's.
	Path string
	// By is the config file that names it.
	By string
	// Hooks: a hooks directory (core.hooksPath); else a config file an
	// include.path or includeIf.*.path names.
	Hooks bool
	// Global: not named by a config but read by git for every
	// repository: the person's global config (~/.gitconfig,
	// ~/.config/git/config, $GIT_CONFIG_GLOBAL) or the system's, which
	// lies in the workspace when the workspace holds the home directory.
	// By is then "git".
	Global bool
	// missing: it does not exist, and is made when a command starts.
	missing bool
	// raw is Path as git spells it, before "a/.." is taken out (the
	// system resolves it by following a, which a command could make a
	// link): the way to it is followed from this.
	raw string
}

// Why says what names p, for a refusal: "the hooks directory
// core.hooksPath names in FILE", or "a config file FILE includes".
func (n NamedPath) Why() string {
	if n.Global {
		return "a config file git reads for every repository (a global or the system config)"
	}
	if n.Hooks {
		return "the hooks directory core.hooksPath names in " + n.By
	}
	return "a config file " + n.By + " includes"
}

// maxIncludeDepth is how deep includes are followed, as git does.
const maxIncludeDepth = 10

// maxConfigFiles bounds how many config files one reading reads, so that
// includes cannot slow every command's start.
const maxConfigFiles = 64

// globalConfigs are the config files the person's git reads beside the
// repository's: the system's (unless GIT_CONFIG_NOSYSTEM), and the
// global ones (GIT_CONFIG_GLOBAL, or $XDG_CONFIG_HOME/git/config, or
// ~/.config/git/config, and ~/.gitconfig), as this process's environment
// says.
func globalConfigs() []string {
	var out []string
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		out = append(out, "/etc/gitconfig")
	}
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		return append(out, g)
	}
	home, _ := os.UserHomeDir()
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		out = append(out, filepath.Join(x, "git", "config"))
	} else if home != "" {
		out = append(out, filepath.Join(home, ".config", "git", "config"))
	}
	if home != "" {
		out = append(out, filepath.Join(home, ".gitconfig"))
	}
	return out
}

// namedByConfigs reads the config files files (the repository's own, and
// globalConfigs) and every file they include, as git parses them, and
// returns what they name: each core.hooksPath value (every one, not only
// the last, which git uses) and each included file. An includeIf's
// condition is not evaluated: every one counts, so that what is named is
// never less than what git reads. root is the worktree's root, which a
// relative core.hooksPath is taken against.
func namedByConfigs(root string, files []string) []NamedPath {
	var out []NamedPath
	read := 0
	seen := map[string]bool{}
	var visit func(file string, depth int)
	visit = func(file string, depth int) {
		if read >= maxConfigFiles || seen[file] {
			return
		}
		seen[file] = true
		read++
		data, err := readSmall(file)
		if err != nil {
			// A link is read where it leads (git follows it); what it
			// leads to is bounded and checked as any file.
			real, rerr := filepath.EvalSymlinks(file)
			if rerr != nil || real == file {
				return
			}
			if data, err = readSmall(real); err != nil {
				return
			}
		}
		parseGitConfig(string(data), func(section, sub, key, value string, ok bool) {
			if !ok {
				return
			}
			switch {
			case section == "core" && sub == "" && key == "hookspath":
				if p, ok := safegit.ExpandHome(value); ok && p != "" {
					if !filepath.IsAbs(p) {
						p = root + string(filepath.Separator) + p
					}
					out = append(out, NamedPath{Path: filepath.Clean(p), By: file, Hooks: true, raw: p})
				}
			case key == "path" && (section == "include" && sub == "" || section == "includeif"):
				p, ok := safegit.ExpandHome(value)
				if !ok || p == "" {
					return
				}
				if !filepath.IsAbs(p) {
					p = filepath.Dir(file) + string(filepath.Separator) + p
				}
				out = append(out, NamedPath{Path: filepath.Clean(p), By: file, raw: p})
				if depth < maxIncludeDepth {
					visit(filepath.Clean(p), depth+1)
				}
			}
		})
	}
	for _, f := range files {
		visit(f, 0)
	}
	return out
}

// parseGitConfig calls emit with each variable of the git config text
// data, as git reads it: section and key lower-cased, a subsection as
// written ("[section "sub"]"; lower-cased in the old "[section.sub]"
// form), and the value unquoted and unescaped (ok false for a key
// without "=", a boolean). Comments (# and ;) and line continuations
// are git's; a line git would refuse is skipped.
func parseGitConfig(data string, emit func(section, sub, key, value string, ok bool)) {
	// As git reads a config file: a UTF-8 byte order mark at its start is
	// skipped, and CR LF is LF (so a backslash before CR LF continues the
	// line).
	data = strings.TrimPrefix(data, "\xef\xbb\xbf")
	data = strings.ReplaceAll(data, "\r\n", "\n")
	var section, sub string
	n := len(data)
	skipLine := func(i int) int {
		for i < n && data[i] != '\n' {
			i++
		}
		return i
	}
	i := 0
	for i < n {
		c := data[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '#' || c == ';':
			i = skipLine(i)
			continue
		case c == '[':
			j := i + 1
			start := j
			for j < n && data[j] != ']' && data[j] != ' ' && data[j] != '\t' && data[j] != '\n' && data[j] != '"' {
				j++
			}
			name := data[start:j]
			for j < n && (data[j] == ' ' || data[j] == '\t') {
				j++
			}
			if j < n && data[j] == '"' {
				j++
				var b strings.Builder
				for j < n && data[j] != '"' && data[j] != '\n' {
					if data[j] == '\\' && j+1 < n && data[j+1] != '\n' {
						j++
					}
					b.WriteByte(data[j])
					j++
				}
				section, sub = strings.ToLower(name), b.String()
				if j < n && data[j] == '"' {
					j++
				}
			} else if s, rest, dotted := strings.Cut(name, "."); dotted {
				section, sub = strings.ToLower(s), strings.ToLower(rest)
			} else {
				section, sub = strings.ToLower(name), ""
			}
			for j < n && data[j] != ']' && data[j] != '\n' {
				j++
			}
			if j < n && data[j] == ']' {
				j++
			}
			i = j // a variable may follow on the same line
			continue
		}
		start := i
		for i < n && (isAlnum(data[i]) || data[i] == '-') {
			i++
		}
		key := strings.ToLower(data[start:i])
		if key == "" {
			i = skipLine(i + 1)
			continue
		}
		for i < n && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r') {
			i++
		}
		if i >= n || data[i] == '\n' || data[i] == '#' || data[i] == ';' {
			emit(section, sub, key, "", false)
			continue
		}
		if data[i] != '=' {
			i = skipLine(i)
			continue
		}
		var value string
		value, i = gitConfigValue(data, i+1)
		// git keeps a value as a C string: it ends at a NUL.
		value, _, _ = strings.Cut(value, "\x00")
		emit(section, sub, key, value, true)
	}
}

// gitConfigValue reads a value of a git config from data[i:], as git's
// parse_value does: leading blanks dropped, blanks outside quotes each
// one space and dropped at the end, quotes removed, \n \t \b \\ \"
// unescaped, a backslash before a newline continues the line, and # or
// ; outside quotes begin a comment. It returns the value and where the
// line ends.
func gitConfigValue(data string, i int) (string, int) {
	n := len(data)
	var b strings.Builder
	quote, space := false, 0
	for ; i < n; i++ {
		c := data[i]
		if c == '\n' {
			break // inside quotes git refuses the line; the value ends all the same
		}
		if !quote && (c == ' ' || c == '\t' || c == '\r') {
			if b.Len() > 0 {
				space++
			}
			continue
		}
		if !quote && (c == '#' || c == ';') {
			for i < n && data[i] != '\n' {
				i++
			}
			break
		}
		for ; space > 0; space-- {
			b.WriteByte(' ')
		}
		switch c {
		case '"':
			quote = !quote
			continue
		case '\\':
			if i+1 >= n {
				continue
			}
			i++
			switch e := data[i]; e {
			case '\n':
				continue
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case '\\', '"':
				b.WriteByte(e)
			default:
				b.WriteByte(e) // git refuses it; kept, to name more rather than less
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String(), i
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// named keeps what the configs the person's git reads for the workspace
// ws name (see namedByConfigs): the repository's config and
// config.worktree in each git directory GitPathsOf found (Pin, Kept,
// Writable), and the system's and the person's global ones. A hooks
// directory or an included config inside the workspace, or strictly
// inside a git directory made writable, is kept as .git/hooks is:
// read-only, the links and directories on the way to it pinned, and, when
// missing, made when a command starts (unless a link lies on the way: then
// no command starts while the first missing entry lies in a writable
// root). One elsewhere must not lie in a writable root (Ends), nor may it
// be the workspace itself or hold it.
func (g *GitPaths) named(ws string) {
	var dirs []string
	dirs = addNew(dirs, g.Pin)
	dirs = addNew(dirs, g.Kept...)
	dirs = addNew(dirs, g.Writable...)
	g.namedFor(ws, ws, dirs)
	// Each submodule's own config, which the person's git in the
	// submodule reads (husky installed there sets its core.hooksPath),
	// against the submodule's worktree: where its core.worktree leads.
	for i, m := range g.modules {
		if i == maxSubmoduleConfigs {
			break
		}
		if root := submoduleRoot(m); root != "" {
			g.namedFor(ws, root, []string{m})
		}
	}
}

// maxSubmoduleConfigs bounds how many submodules' configs named reads, so
// that a tree of them cannot slow every command's start. A hooks
// directory a config past them names is not kept; the observer still
// records what a command writes there.
const maxSubmoduleConfigs = 64

// submoduleRoot is the worktree of the submodule whose git directory is
// m: where the last core.worktree of m/config leads (relative to m, as git
// takes it); "" when it names none.
func submoduleRoot(m string) string {
	data, err := readSmall(filepath.Join(m, "config"))
	if err != nil {
		return ""
	}
	root := ""
	parseGitConfig(string(data), func(section, sub, key, value string, ok bool) {
		if ok && section == "core" && sub == "" && key == "worktree" && value != "" {
			root = value
		}
	})
	if root == "" {
		return ""
	}
	if !filepath.IsAbs(root) {
		root = filepath.Join(m, root)
	}
	return filepath.Clean(root)
}

// namedFor is named for the git directories dirs of the repository
// whose worktree is root: the workspace ws itself, or the repository
// that holds it (see enclosingRepo), against whose root git takes a
// relative core.hooksPath.
func (g *GitPaths) namedFor(ws, root string, dirs []string) {
	var files []string
	for _, d := range dirs {
		if d != "" {
			files = append(files, filepath.Join(d, "config"), filepath.Join(d, "config.worktree"))
		}
	}
	if len(files) == 0 {
		return
	}
	keepable := func(p string) bool { return p != ws && within(p, ws) || strictlyInAny(p, g.Writable) }
	global := globalConfigs()
	named := namedByConfigs(root, append(files, global...))
	for _, p := range global {
		// The global configs themselves, where the workspace holds them
		// (a workspace that is the home directory, or holds it): a
		// command that wrote an fsmonitor there would have the person's
		// git run it in every repository.
		if filepath.IsAbs(p) {
			named = append(named, NamedPath{Path: filepath.Clean(p), By: "git", Global: true})
		}
	}
	for _, n := range named {
		if slices.ContainsFunc(g.Named, func(m NamedPath) bool { return m.Path == n.Path && m.raw == n.raw }) {
			continue // named again: by another config, or for the enclosing repository
		}
		raw := n.raw
		if raw == "" {
			raw = n.Path
		}
		w := wayTo(ws, raw)
		g.tooLong(n.By, w)
		switch {
		case w.err == nil && within(ws, w.end):
			// The workspace, or what holds it: nothing can be made
			// read-only for it.
			g.Ends = addNew(g.Ends, w.end)
		case w.err == nil && keepable(w.end):
			g.keepWay(w, g.Writable)
			g.ReadOnly = addNew(g.ReadOnly, w.end)
			n.Path = w.end
			g.Named = append(g.Named, n)
		case w.err == nil:
			// Outside: the links on the way inside are pinned all the same
			// (a command could put a directory of its own in a link's place).
			g.keepWay(w, g.Writable)
			g.Ends = addNew(g.Ends, w.end)
		case w.missing != "" && keepable(w.missing):
			g.keepWay(w, g.Writable)
			if linkOnWay(w) {
				g.Beyond = addNew(g.Beyond, w.missing)
				continue
			}
			g.ReadOnly = addNew(g.ReadOnly, n.Path)
			n.missing = true
			g.Named = append(g.Named, n)
		case w.missing != "":
			g.keepWay(w, g.Writable)
			g.Beyond = addNew(g.Beyond, w.missing)
		default:
			// It passes what is not a directory: that entry is kept as it
			// is, so that no command can put a directory there.
			var pe *fs.PathError
			if errors.As(w.err, &pe) && keepable(pe.Path) {
				g.keepWay(w, g.Writable)
				g.ReadOnly = addNew(g.ReadOnly, pe.Path)
			}
		}
	}
}

// linkOnWay reports whether a symbolic link lies among the entries inside
// the workspace on the way w.
func linkOnWay(w linkWay) bool {
	for _, p := range w.inside {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

// makeNamed makes the missing hooks directories and included configs of
// g.Named (a directory, or an empty file, and the directories on the way)
// and pins the way to each it made: what does not exist cannot be bound
// read-only. It is done as a command starts, never through a link (see
// named).
func (g *GitPaths) makeNamed(ws string) {
	for _, n := range g.Named {
		if !n.missing {
			continue
		}
		// Made as git spells it: the "a" of "a/../.husky" is made too, a
		// directory, and pinned with the way, so that no command can make
		// it a link that leads git's ".." elsewhere.
		raw := n.raw
		if raw == "" {
			raw = n.Path
		}
		if n.Hooks {
			_ = os.MkdirAll(raw, 0o755)
		} else if os.MkdirAll(filepath.Dir(raw), 0o755) == nil {
			touch(n.Path)
		}
		w := wayTo(ws, raw)
		g.keepWay(w, g.Writable)
		g.tooLong(n.By, w)
	}
}
