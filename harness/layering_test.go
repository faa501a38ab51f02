package harness_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// flagWords are what only the command line may say: its flags and its
// commands.
var flagWords = regexp.MustCompile("(^|[^\\w-])--[a-z][a-z-]+|`harness [a-z]+")

// TestLibraryErrorsNameNoFlags fails when a string in a library package —
// anything but the command — names a flag of the command line or one of
// its commands: a library error names the parameter that is wrong, and the
// command maps it to its flag.
func TestLibraryErrorsNameNoFlags(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	var found []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			// safegit, worktree and sealnote run git: their "--" strings
			// are git's arguments, not the command line's flags.
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || path == filepath.Join(root, "cmd") ||
				path == filepath.Join(root, "safegit") || path == filepath.Join(root, "worktree") || path == filepath.Join(root, "sealnote")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && flagWords.MatchString(s) {
					found = append(found, fset.Position(lit.Pos()).String()+": "+s)
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, found, "library strings name parameters, not the command's flags or commands")
}

// module is the import path of this module; the layers below name its
// packages relative to it.
const module = "github.com/seed-7cc7a084/harness"

// layers is the package table of DESIGN.md ("Packages"), foundations
// first: each package of the module and the packages of the module it may
// import. A package may import what its row names and, through them,
// everything below them: "harness and below" is harness and everything
// harness may import. "*" is anything. A package missing from the table
// is an error: a new package gets its row here and in DESIGN.md.
var layers = []struct {
	pkg string
	may []string
}{
	{"facts", nil},
	{"thread", []string{"facts"}},
	// The stores' conformance suite and the NATS servers of their tests:
	// test kits (testKits).
	{"thread/storetest", []string{"thread"}},
	{"thread/natsstore/natstest", nil},
	// The stores beside the Pebble one: like thread, they may import
	// thread and facts.
	{"thread/natsstore", []string{"thread"}},
	// Sealed heads: a person's key, signed heads, the witness log, and
	// the check of a log against them. The runtime seals through its own
	// interface (harness.Sealer); the stock harness makes the sealer.
	{"seal", []string{"thread"}},
	{"effect", nil},
	// git as the harness runs it itself, in a repository it does not
	// trust; and a thread's own worktree of the workspace.
	{"safegit", nil},
	{"worktree", []string{"safegit"}},
	{"sealnote", []string{"seal", "safegit"}},
	{"fold", []string{"facts", "effect"}},
	{"action", []string{"facts", "effect"}},
	// The sandbox's helper process, and the small program that runs it.
	{"sandbox/internal/helper", nil},
	{"sandbox/cmd/harness-sandbox", []string{"sandbox/internal/helper"}},
	// The network allow-list's proxy: the standard library only.
	{"sandbox/netproxy", nil},
	// safegit for git's own reading of a path in its config ("~user/"),
	// which the sandbox keeps read-only where git would run what is there.
	{"sandbox", []string{"facts", "safegit", "sandbox/internal/helper", "sandbox/netproxy"}},
	// The socket store: sandbox for the user's runtime directory, which
	// every sandbox hides and where the socket lives.
	{"thread/socketstore", []string{"thread", "sandbox"}},
	{"scheduler", []string{"fold", "action"}},
	{"model", []string{"facts"}},
	{"model/internal/call", []string{"model"}},
	{"model/openai", []string{"model", "model/internal/call"}},
	{"model/anthropic", []string{"model", "model/internal/call"}},
	// The providers' wire-format suite: a test kit (testKits), for their
	// tests only (the end-to-end runs under the runtime live in package
	// harness's tests).
	{"internal/providertest", []string{"model/openai", "model/anthropic", "effect"}},
	{"present", []string{"facts"}},
	// Asking a person at a terminal: a line, a key, text not echoed.
	{"present/ask", []string{"present"}},
	// Search across threads: an index of the store's logs, beside it,
	// whose hits are read back from the logs; excerpts are escaped
	// (present).
	{"search", []string{"thread", "present"}},
	// The built-in tools, with present beside DESIGN.md's "action,
	// sandbox": a preview is a diff escaped for the terminal it is
	// approved on (present.UnifiedDiff, present.EscapeText); present
	// imports only facts.
	{"tools", []string{"action", "sandbox", "present", "worktree"}},
	// The MCP client: what DESIGN.md says, and no more.
	{"mcp", []string{"action", "facts", "sandbox"}},
	{"tracing", nil},
	{"harness", []string{"thread", "fold", "action", "scheduler", "model"}},
	{"drive", []string{"harness", "search"}},
	{"audit", []string{"harness"}},
	{"rewind", []string{"harness"}},
	{"rerun", []string{"drive", "audit", "rewind"}},
	{"stock", []string{"drive", "audit", "rewind", "rerun", "present", "tools", "mcp", "tracing", "worktree",
		"model/openai", "model/anthropic", "thread/natsstore", "thread/socketstore", "seal", "sealnote"}},
	// The front ends: the page and HTTP API, harness as an MCP server,
	// the workers.
	{"serve", []string{"drive", "stock"}},
	{"mcpserver", []string{"drive", "stock"}},
	{"worker", []string{"drive", "stock"}},
	{"demo", []string{"drive", "stock"}},
	// What the front ends return, as terminal text and the command line's
	// JSON documents: above present and the front ends whose results it
	// renders (a rerun's report, a worker's events, the settings in
	// force, the demo's steps); only the command line imports it.
	{"tell", []string{"drive", "audit", "rewind", "seal", "present", "present/ask", "tools", "rerun", "stock", "mcp", "worker", "demo"}},
	// The public test kit: anything, and only tests import it (testKits).
	{"harnesstest", []string{"*"}},
	{"cmd/harness", []string{"*"}},
}

// testKits are the packages only tests import: the public test kit and
// the suites and servers the stores' and providers' tests share. A package
// that is not a test kit itself importing one is an arrow the table does
// not allow, whatever its row says.
var testKits = []string{"harnesstest", "thread/storetest", "thread/natsstore/natstest", "internal/providertest"}

// isTestKit reports whether pkg is a test kit or a package inside one.
func isTestKit(pkg string) bool {
	return slices.ContainsFunc(testKits, func(kit string) bool { return pkg == kit || strings.HasPrefix(pkg, kit+"/") })
}

// mayImport returns, for each package of the table, the set of packages
// it may import: its row and, transitively, theirs.
func mayImport(t *testing.T) map[string]map[string]bool {
	rows := map[string][]string{}
	for _, l := range layers {
		require.NotContains(t, rows, l.pkg, "the table has two rows for %s", l.pkg)
		for _, m := range l.may {
			_, ok := rows[m]
			require.True(t, ok || m == "*", "row %s names %s, which has no row above it: foundations come first", l.pkg, m)
		}
		rows[l.pkg] = l.may
	}
	may := map[string]map[string]bool{}
	for _, l := range layers { // foundations first, so every row it names is done
		set := map[string]bool{}
		for _, m := range l.may {
			set[m] = true
			for below := range may[m] {
				set[below] = true
			}
		}
		may[l.pkg] = set
	}
	return may
}

// listedPackage is what go list says of a package of the module.
type listedPackage struct {
	ImportPath string
	Imports    []string
	Error      *struct{ Err string }
}

// TestImportsPointDownTheTable fails when a package of the module imports
// one that its row of the package table (layers, DESIGN.md) does not
// allow, naming the arrow, and when a package that is not a test imports
// the test kit. What go list reports for the packages themselves is
// checked; their tests may import anything.
func TestImportsPointDownTheTable(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the packages with")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	cmd := exec.Command(goCmd, "list", "-e", "-json=ImportPath,Imports,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())

	may := mayImport(t)
	var arrows []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		require.Nil(t, p.Error, "go list %s", p.ImportPath)
		from, ok := strings.CutPrefix(p.ImportPath, module+"/")
		require.True(t, ok, "%s is not a package of %s", p.ImportPath, module)
		allowed, ok := may[from]
		if !ok {
			arrows = append(arrows, fmt.Sprintf("%s has no row in the package table: give it one (here and in DESIGN.md)", from))
		}
		for _, imp := range p.Imports {
			to, ours := strings.CutPrefix(imp, module+"/")
			if !ours {
				continue
			}
			if isTestKit(to) && !isTestKit(from) {
				arrows = append(arrows, fmt.Sprintf("%s -> %s: only tests import a test kit", from, to))
				continue
			}
			if !ok || allowed["*"] || allowed[to] {
				continue
			}
			arrows = append(arrows, fmt.Sprintf("%s -> %s: runs up the package table (%s may import %s)", from, to, from, strings.Join(sortedKeys(allowed), ", ")))
		}
	}
	if len(arrows) > 0 {
		t.Errorf("imports run up the package table of DESIGN.md:\n%s", strings.Join(arrows, "\n"))
	}
}

// sortedKeys returns the keys of set in order.
func sortedKeys(set map[string]bool) []string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
