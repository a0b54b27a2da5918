package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The documented Go compiles as written (issue 45): every ```go block of
// README.md, docs/*.md and the binding READMEs, unless the line just before
// its fence is <!-- docs-test: skip (why) -->, is compiled by `go build`
// against this checkout as the body of a main function. The blocks are
// fragments of a reader's program, so the names a reader brings (req,
// request, requests, usage, jsonText, buf and a Runner r) are declared
// beside it, the imports it names (`import "…"` lines and `// import "…"`
// comments) and the standard packages it uses are imported, and a name it
// declares but does not use again is used, as a program around it would.
// A renamed function, a changed signature or a field that is gone fails it.

// goBlock is one ```go block of a doc.
type goBlock struct {
	where, code, skip string
}

var (
	importLine    = regexp.MustCompile(`^\s*import\s+"([^"]+)"\s*$`)
	importComment = regexp.MustCompile(`//\s*import\s+"([^"]+)"`)
	// the standard packages a block may use without saying so
	stdUses = map[string]*regexp.Regexp{
		"fmt":           regexp.MustCompile(`\bfmt\.`),
		"errors":        regexp.MustCompile(`\berrors\.`),
		"encoding/json": regexp.MustCompile(`\bjson\.`),
	}
)

// goBlocks reads the ```go blocks of one Markdown file.
func goBlocks(root, file string) ([]goBlock, error) {
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, err
	}
	var out []goBlock
	var cur *goBlock
	var prev string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.code += line + "\n"
		case fence.MatchString(line):
			if m := fence.FindStringSubmatch(line); m[1] == "go" {
				cur = &goBlock{where: file + ":" + strconv.Itoa(n)}
				if s := skipMarker.FindStringSubmatch(prev); s != nil {
					cur.skip = s[1]
				}
			}
		}
		if cur == nil && trimmed != "" {
			prev = trimmed
		}
	}
	return out, sc.Err()
}

// goProgram is block as a main package: its imports, the reader's names, and
// its statements in main with every name they declare used.
func goProgram(code string) (string, error) {
	imports := map[string]bool{"github.com/polyloop/assembly/core": true, "github.com/polyloop/assembly/wasmhost": true}
	var body []string
	for _, line := range strings.Split(code, "\n") {
		if m := importLine.FindStringSubmatch(line); m != nil {
			imports[m[1]] = true
			continue
		}
		if m := importComment.FindStringSubmatch(line); m != nil {
			imports[m[1]] = true
		}
		body = append(body, line)
	}
	for pkg, use := range stdUses {
		if use.MatchString(code) {
			imports[pkg] = true
		}
	}
	main := "func main() {\n" + strings.Join(body, "\n") + "\n}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "block.go", "package main\n"+main, 0)
	if err != nil {
		return "", err
	}
	var declared []string
	seen := map[string]bool{}
	add := func(id *ast.Ident) {
		if id.Name != "_" && !seen[id.Name] {
			seen[id.Name] = true
			declared = append(declared, id.Name)
		}
	}
	for _, s := range f.Decls[0].(*ast.FuncDecl).Body.List {
		switch s := s.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE {
				for _, e := range s.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						add(id)
					}
				}
			}
		case *ast.DeclStmt:
			for _, spec := range s.Decl.(*ast.GenDecl).Specs {
				if v, ok := spec.(*ast.ValueSpec); ok {
					for _, id := range v.Names {
						add(id)
					}
				}
			}
		}
	}
	var uses strings.Builder
	for _, name := range declared {
		uses.WriteString("\t_ = " + name + "\n")
	}
	paths := make([]string, 0, len(imports))
	for p := range imports {
		paths = append(paths, strconv.Quote(p))
	}
	sort.Strings(paths)
	return "package main\n\nimport (\n\t" + strings.Join(paths, "\n\t") + "\n)\n\n" + `// the names a reader's program brings
var (
	req      = &core.Request{ObservationTemplate: "{observation}"}
	request  = core.EncodeRequest(req)
	requests = [][]byte{request}
	usage    = []any{nil}
	jsonText = []byte(` + "`" + `{"observation_template": "{observation}"}` + "`" + `)
	buf      []byte
	r, _     = wasmhost.New(wasmhost.Options{})
)

` + strings.TrimSuffix(main, "}\n") + uses.String() + "}\n", nil
}

func TestDocumentedGoCompiles(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []goBlock
	for _, f := range docFiles(t, root) {
		b, err := goBlocks(root, f)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, b...)
	}
	tmp := t.TempDir()
	ran, skipped := 0, 0
	for i, b := range blocks {
		if b.skip != "" {
			skipped++
			t.Logf("skipped %s (%s)", b.where, b.skip)
			continue
		}
		ran++
		src, err := goProgram(b.code)
		if err != nil {
			t.Errorf("%s: does not parse as statements: %v", b.where, err)
			continue
		}
		// The program stands, through an overlay, in a folder of the module
		// that does not exist on disk; nothing is written to the checkout.
		file := filepath.Join(tmp, fmt.Sprintf("block%d.go", i))
		dir := filepath.Join(root, "internal", "docsblock", strconv.Itoa(i))
		overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(dir, "main.go"): file}})
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file+".json", overlay, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(goTool, "build", "-overlay", file+".json", "-o", os.DevNull, "./internal/docsblock/"+strconv.Itoa(i))
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: does not compile: %v\n%s\nthe program:\n%s", b.where, err, out, src)
			continue
		}
		t.Logf("compiled %s", b.where)
	}
	t.Logf("documented Go blocks: %d compiled, %d skipped", ran, skipped)
	if ran == 0 {
		t.Fatal("no documented Go block found")
	}
}
