package harness_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
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
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || path == filepath.Join(root, "cmd")) {
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
