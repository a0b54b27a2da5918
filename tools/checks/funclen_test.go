// Package checks_test holds checks over the module's own source (go test
// ./tools/checks): the function-length limit and what the module may link.
package checks_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxFuncLines is the house limit on a function's length, from its func
// keyword to its closing brace, outside tests.
const maxFuncLines = 60

// longFuncs are the functions allowed over maxFuncLines, each with its
// reason in RATIONALE.md ("Where things are in core/"): loops over every
// byte of a request's text, kept whole because a call costs in Go's
// WebAssembly code.
var longFuncs = []string{
	"core/utf8_other.go: utf8Count",
	"wirejson/wirejson.go: parser.run",
	"wirejson/wirejson.go: parser.str",
}

// TestFunctionLength fails on a function of a non-test Go file of the module
// over maxFuncLines lines that longFuncs does not name, and on an entry of
// longFuncs that is no longer such a function.
func TestFunctionLength(t *testing.T) {
	root := filepath.Join("..", "..")
	long, files := longFunctions(t, root)
	if files < 50 {
		t.Fatalf("only %d Go files under %s: is it the module's root?", files, root)
	}
	for _, name := range slices.Sorted(maps.Keys(long)) {
		n := long[name]
		if slices.Contains(longFuncs, name) {
			t.Logf("%s: %d lines (allowed)", name, n)
		} else {
			t.Errorf("%s is %d lines (at most %d): split it, or give the reason in RATIONALE.md and add it to longFuncs", name, n, maxFuncLines)
		}
	}
	for _, name := range longFuncs {
		if _, ok := long[name]; !ok {
			t.Errorf("longFuncs names %s, which is not a function over %d lines: remove it (and its paragraph in RATIONALE.md)", name, maxFuncLines)
		}
	}
}

// longFunctions parses every non-test .go file under root (directories
// starting with '.' or '_', node_modules and testdata aside) and returns its
// functions over maxFuncLines as "path: Recv.Name" → lines, and the number of
// files read.
func longFunctions(t *testing.T, root string) (map[string]int, int) {
	long := map[string]int{}
	files := 0
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
				long[filepath.ToSlash(rel)+": "+funcName(fn)] = n
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return long, files
}

// funcName is Name, or Recv.Name for a method (the receiver's type without
// its pointer or type parameters).
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
