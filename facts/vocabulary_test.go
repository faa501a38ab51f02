package facts_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// vocabulary are the types whose values make up what a log can say: a
// kind, an effect state, a report status, a verdict, a decision, an error
// class. Their values are declared in this package and nowhere else, so
// that a binary linking only facts reads every log a binary linking more
// wrote (a JSON export round-trips, a fact hashes the same).
var vocabulary = map[string]bool{
	"Kind": true, "EffectState": true, "ReportStatus": true, "Verdict": true,
	"Decision": true, "ErrorClass": true, "AfterDenial": true,
}

// TestVocabularyLivesInFacts fails when a package other than facts
// declares a constant or variable of one of the vocabulary types, or
// converts a literal to one: every kind and state lives in facts.
func TestVocabularyLivesInFacts(t *testing.T) {
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
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || path == filepath.Join(root, "facts")) {
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
			switch n := n.(type) {
			case *ast.GenDecl:
				for _, spec := range n.Specs {
					vs, ok := spec.(*ast.ValueSpec)
					if ok && isVocabulary(vs.Type) && (n.Tok == token.CONST || hasLiteral(vs.Values)) {
						found = append(found, fset.Position(vs.Pos()).String())
					}
				}
			case *ast.CallExpr:
				if len(n.Args) == 1 && isVocabulary(n.Fun) {
					if _, lit := n.Args[0].(*ast.BasicLit); lit {
						found = append(found, fset.Position(n.Pos()).String())
					}
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, found, "kinds and states are declared in package facts only")
}

func hasLiteral(values []ast.Expr) bool {
	for _, v := range values {
		if _, ok := v.(*ast.BasicLit); ok {
			return true
		}
	}
	return false
}

func isVocabulary(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "facts" && vocabulary[sel.Sel.Name]
}
