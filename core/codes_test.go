package core

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"testing"
)

// TestCodesListsEveryCode: Codes (the bindings' ERROR_CODES) lists every
// Code constant of errors.go, in the order of its declarations.
func TestCodesListsEveryCode(t *testing.T) {
	f, err := goparser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Code" {
				lit := v.Values[0].(*ast.BasicLit)
				declared = append(declared, lit.Value[1:len(lit.Value)-1])
			}
		}
	}
	codes := Codes()
	if len(codes) != len(declared) {
		t.Fatalf("Codes has %d codes, errors.go declares %d: %v", len(codes), len(declared), declared)
	}
	for i, c := range codes {
		if string(c) != declared[i] {
			t.Errorf("Codes()[%d] = %q, errors.go declares %q there", i, c, declared[i])
		}
	}
}
