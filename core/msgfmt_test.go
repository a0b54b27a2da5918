package core

import (
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/polyloop/assembly/core/msgfmt"
)

// TestMessageFormatsAreFmt finds every message format of the core, the
// Msg*Format constants of the contract (abi) and the format of each
// msgfmt.Sprintf and tmplErr call in the sources of the core, abi and
// wirejson, checks that the call passes one
// argument per verb, and formats each with many argument values through
// msgfmt.Sprintf and fmt.Sprintf: the texts must be the same (the core left
// fmt so that the module does not link it; go vet no longer checks these
// calls, this test does).
func TestMessageFormatsAreFmt(t *testing.T) {
	formats := map[string]int{} // format: its arguments at a call, -1 for a constant
	consts := map[string]string{}
	var calls []*ast.CallExpr
	var files []string
	for _, glob := range []string{"abi/*.go", "*.go", "wirejson/*.go"} {
		more, _ := filepath.Glob(glob)
		files = append(files, more...)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, id := range n.Names {
					if i < len(n.Values) {
						if s, ok := constString(n.Values[i], consts); ok {
							consts[id.Name] = s
						}
					}
				}
			case *ast.CallExpr:
				calls = append(calls, n)
			}
			return true
		})
	}
	for name, s := range consts {
		if strings.HasPrefix(name, "Msg") && strings.HasSuffix(name, "Format") {
			formats[s] = -1
		}
	}
	for _, c := range calls {
		format, args, ok := formatOfCall(t, c, consts)
		if ok {
			_, verbs, err := msgfmt.Split(format)
			if err != nil || len(verbs) != args {
				t.Errorf("a call passes %d arguments to the format %q (verbs %q, %v)", args, format, verbs, err)
			}
			formats[format] = args
		}
	}
	t.Logf("%d formats", len(formats))
	if len(formats) < 30 {
		t.Fatalf("found only %d formats; the search is broken", len(formats))
	}
	for format := range formats {
		checkFormat(t, format)
	}
}

// formatOfCall is the format and the number of its arguments of a call of
// msgfmt.Sprintf or tmplErr; ok is false for other calls.
func formatOfCall(t *testing.T, c *ast.CallExpr, consts map[string]string) (format string, args int, ok bool) {
	var at int
	switch fn := c.Fun.(type) {
	case *ast.SelectorExpr:
		if x, isId := fn.X.(*ast.Ident); !isId || x.Name != "msgfmt" || fn.Sel.Name != "Sprintf" {
			return "", 0, false
		}
	case *ast.Ident:
		if fn.Name != "tmplErr" {
			return "", 0, false
		}
		at = 1
	default:
		return "", 0, false
	}
	if c.Ellipsis.IsValid() { // tmplErr's own call: format, args...
		return "", 0, false
	}
	format, ok = constString(c.Args[at], consts)
	if !ok {
		t.Errorf("a message format that is not a constant string: %#v", c.Args[at])
	}
	return format, len(c.Args) - at - 1, ok
}

// constString evaluates a constant string expression: a literal, a constant
// (core.Name too) or a sum of them.
func constString(e ast.Expr, consts map[string]string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		s, err := strconv.Unquote(e.Value)
		return s, err == nil && e.Kind == token.STRING
	case *ast.Ident:
		s, ok := consts[e.Name]
		return s, ok
	case *ast.SelectorExpr:
		s, ok := consts[e.Sel.Name]
		return s, ok
	case *ast.BinaryExpr:
		a, okA := constString(e.X, consts)
		b, okB := constString(e.Y, consts)
		return a + b, okA && okB && e.Op == token.ADD
	}
	return "", false
}

// checkFormat formats format with each of many argument values (an int and
// an int64 for %d, a string for %s) by both formatters.
func checkFormat(t *testing.T, format string) {
	_, verbs, err := msgfmt.Split(format)
	if err != nil {
		t.Errorf("format %q: %v", format, err)
		return
	}
	ints := []int64{0, 1, -1, 42, 1 << 20, 1<<30 + 1, 1<<32 - 1, math.MaxInt64, math.MinInt64}
	strs := []string{"", "x", "%d", "%s %%", "é\u2028", "'{'", "\"q\"", "\x00\xff", strings.Repeat("long ", 40)}
	for k := range max(len(ints), len(strs)) {
		for _, asInt64 := range []bool{false, true} {
			args := make([]any, len(verbs))
			for i, v := range verbs {
				switch {
				case v == 's':
					args[i] = strs[(k+i)%len(strs)]
				case asInt64:
					args[i] = ints[(k+i)%len(ints)]
				default:
					args[i] = int(ints[(k+i)%len(ints)])
				}
			}
			if got, want := msgfmt.Sprintf(format, args...), fmt.Sprintf(format, args...); got != want {
				t.Fatalf("msgfmt.Sprintf(%q, %#v) = %q, fmt.Sprintf %q", format, args, got, want)
			}
		}
	}
}
