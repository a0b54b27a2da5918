package core

// The shared test vectors of testdata/vectors (written by the pure-Python
// reference, testdata/gen/reference.py) run against AssembleBytes (the rules
// in testdata/vectors/README.md). This runner alone checks the canonical shape
// of error responses byte by byte; host-test proves every engine gives the
// same bytes, so the Python and JavaScript runners read errors through their
// bindings' own decoders.

import (
	"bytes"
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/polyloop/assembly/internal/testing/vectors"
)

const vectorsDir = "../testdata/vectors"

// loadVectors reads every testdata/vectors/*.json through the one Go loader
// (internal/vectors); their format is checked where they are written and
// committed (testdata/gen/schema.py).
func loadVectors(t *testing.T) []vectors.Case {
	t.Helper()
	cases, err := vectors.Load(vectorsDir)
	if err != nil {
		t.Fatalf("%v: run `make vectors`", err)
	}
	return cases
}

// TestVectors runs every shared vector through AssembleBytes: ok cases must
// give the expected bytes exactly; error cases must give a canonical error
// response {v: 1, ok: false, error: {code, message, path}} with the expected
// code and path and a non-empty message.
func TestVectors(t *testing.T) {
	for _, lv := range loadVectors(t) {
		lv := lv
		t.Run(strings.TrimSuffix(lv.File, ".json")+"/"+lv.Name, func(t *testing.T) {
			got := AssembleBytes(lv.Request)
			if lv.Error == nil {
				if !bytes.Equal(got, lv.Response) {
					t.Fatalf("%s\n%s", lv.Description, describeMismatch(got, lv.Response))
				}
				return
			}
			code, path, msg, offset, err := decodeErrorResponse(got)
			if err != nil {
				t.Fatalf("%s\nwant error %s at %q; the response is not a canonical error response: %v\n% x",
					lv.Description, lv.Error.Code, lv.Error.Path, err, head(got, 200))
			}
			if code != lv.Error.Code || path != lv.Error.Path || offset != lv.Error.WantOffset() {
				t.Fatalf("%s\nwant %s at %q offset %d\n got %s at %q offset %d (message %q)",
					lv.Description, lv.Error.Code, lv.Error.Path, lv.Error.WantOffset(), code, path, offset, msg)
			}
			if msg == "" {
				t.Fatalf("%s: empty error message", lv.Description)
			}
			// DecodeResponse, the hosts' reader, gives the same error.
			_, derr := DecodeResponse(got)
			if e, ok := derr.(*Error); !ok || *e != (Error{Code: Code(code), Path: path, Message: msg, Offset: offset}) {
				t.Fatalf("DecodeResponse gives %#v, want %s at %q offset %d", derr, code, path, offset)
			}
		})
	}
}

// TestVectorsCoverEveryErrorCode checks that the vectors use only codes the
// package declares, and cover every one except too_large and internal (they
// cannot be a small vector; see testdata/vectors/README.md).
func TestVectorsCoverEveryErrorCode(t *testing.T) {
	declared := declaredCodes(t)
	covered := map[string]bool{}
	for _, lv := range loadVectors(t) {
		if lv.Error != nil {
			if !declared[lv.Error.Code] {
				t.Errorf("%s/%s: code %q is not a Code constant of the package", lv.File, lv.Name, lv.Error.Code)
			}
			covered[lv.Error.Code] = true
		}
	}
	for code := range declared {
		if code == string(CodeTooLarge) || code == string(CodeInternal) {
			continue
		}
		if !covered[code] {
			t.Errorf("no vector has error code %q", code)
		}
	}
}

// declaredCodes parses the package's Go files and returns the string value
// of every constant of type Code, so a new code cannot go unnoticed.
func declaredCodes(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: a Code constant that is not a string literal", fset.Position(v.Pos()))
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					codes[s] = true
				}
			}
		}
	}
	if len(codes) < 13 {
		t.Fatalf("found only %d Code constants", len(codes))
	}
	return codes
}

// TestVectorsEmptyInjections: a request without injections, with {}, and with
// only empty channels give byte-identical responses (docs/SPEC.md §3).
func TestVectorsEmptyInjections(t *testing.T) {
	names := []string{"injections-empty-absent", "injections-empty-map", "injections-empty-channels"}
	byName := map[string]vectors.Case{}
	for _, lv := range loadVectors(t) {
		byName[lv.Name] = lv
	}
	var first []byte
	for i, n := range names {
		lv, ok := byName[n]
		if !ok || lv.Response == nil {
			t.Fatalf("vector %s missing or not an ok case", n)
		}
		if i > 0 && !bytes.Equal(lv.Response, byName[names[0]].Response) {
			t.Fatalf("vectors %s and %s expect different responses", names[0], n)
		}
		got := AssembleBytes(lv.Request)
		if i == 0 {
			first = got
		} else if !bytes.Equal(got, first) {
			t.Fatalf("%s and %s give different bytes:\n%s", names[0], n, describeMismatch(got, first))
		}
	}
}

// describeMismatch says where two byte strings first differ.
func describeMismatch(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(i-16, 0)
	return fmt.Sprintf("responses differ at byte %d (got %d bytes, want %d)\n got  ...% x\n want ...% x",
		i, len(got), len(want), head(got[min(from, len(got)):], 48), head(want[min(from, len(want)):], 48))
}

func head(b []byte, n int) []byte { return b[:min(n, len(b))] }

// --- a tiny strict msgpack reader for error responses -------------------
//
// It accepts only what a canonical error response may contain: maps, strs
// and non-negative ints in their shortest form, and bools.

type mpReader struct {
	b   []byte
	pos int
}

func (r *mpReader) next(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, fmt.Errorf("truncated at byte %d", r.pos)
	}
	out := r.b[r.pos : r.pos+n]
	r.pos += n
	return out, nil
}

func (r *mpReader) uintN(n int) (uint64, error) {
	b, err := r.next(n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

// readValue returns a string, uint64, bool or []mpPair (a map in wire order).
func (r *mpReader) readValue() (any, error) {
	tb, err := r.next(1)
	if err != nil {
		return nil, err
	}
	b := tb[0]
	switch {
	case b <= 0x7f:
		return uint64(b), nil
	case b >= 0x80 && b <= 0x8f:
		return r.readMap(int(b & 0x0f))
	case b >= 0xa0 && b <= 0xbf:
		return r.readStr(int(b & 0x1f))
	case b == 0xc2 || b == 0xc3:
		return b == 0xc3, nil
	case b == 0xcc || b == 0xcd || b == 0xce || b == 0xcf:
		size := 1 << (b - 0xcc)
		v, err := r.uintN(size)
		if err == nil && (size > 1 && v < 1<<(8*(size/2)) || size == 1 && v < 0x80) {
			err = fmt.Errorf("int %d not in its shortest form", v)
		}
		return v, err
	case b == 0xd9 || b == 0xda || b == 0xdb:
		size := map[byte]int{0xd9: 1, 0xda: 2, 0xdb: 4}[b]
		n, err := r.uintN(size)
		if err != nil {
			return nil, err
		}
		if size == 1 && n < 32 || size > 1 && n < 1<<(8*(size/2)) {
			return nil, fmt.Errorf("str header of length %d not in its shortest form", n)
		}
		return r.readStr(int(n))
	case b == 0xde:
		n, err := r.uintN(2)
		if err == nil && n < 16 {
			err = fmt.Errorf("map16 of %d entries", n)
		}
		if err != nil {
			return nil, err
		}
		return r.readMap(int(n))
	}
	return nil, fmt.Errorf("unexpected type byte %#x at %d in an error response", b, r.pos-1)
}

type mpPair struct {
	key   string
	value any
}

func (r *mpReader) readStr(n int) (string, error) {
	b, err := r.next(n)
	return string(b), err
}

func (r *mpReader) readMap(n int) ([]mpPair, error) {
	var out []mpPair
	for i := 0; i < n; i++ {
		k, err := r.readValue()
		if err != nil {
			return nil, err
		}
		ks, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("non-str map key %v", k)
		}
		v, err := r.readValue()
		if err != nil {
			return nil, err
		}
		out = append(out, mpPair{ks, v})
	}
	return out, nil
}

// decodeErrorResponse checks the shape {v: 1, ok: false, error: {code,
// message, path}} (keys in this order, nothing else, no trailing bytes), with
// a fourth key offset (an int) exactly when code is invalid_template, and
// returns the code, path, message and offset (-1 when absent).
func decodeErrorResponse(b []byte) (code, path, message string, offset int, err error) {
	r := &mpReader{b: b}
	v, err := r.readValue()
	if err != nil {
		return "", "", "", -1, err
	}
	if r.pos != len(b) {
		return "", "", "", -1, fmt.Errorf("%d trailing bytes", len(b)-r.pos)
	}
	top, ok := v.([]mpPair)
	if !ok || len(top) != 3 || top[0].key != "v" || top[1].key != "ok" || top[2].key != "error" {
		return "", "", "", -1, fmt.Errorf("top level is not the map {v, ok, error}: %v", v)
	}
	if top[0].value != uint64(1) || top[1].value != false {
		return "", "", "", -1, fmt.Errorf("want v 1 and ok false, got v %v ok %v", top[0].value, top[1].value)
	}
	e, ok := top[2].value.([]mpPair)
	if !ok || len(e) < 3 || e[0].key != "code" || e[1].key != "message" || e[2].key != "path" {
		return "", "", "", -1, fmt.Errorf("error is not the map {code, message, path[, offset]}: %v", top[2].value)
	}
	var strs [3]string
	for i, p := range e[:3] {
		if strs[i], ok = p.value.(string); !ok {
			return "", "", "", -1, fmt.Errorf("error.%s is not a str", p.key)
		}
	}
	offset = -1
	wantOffset := strs[0] == string(CodeInvalidTemplate)
	switch {
	case len(e) == 3 && !wantOffset:
	case len(e) == 4 && wantOffset && e[3].key == "offset":
		n, ok := e[3].value.(uint64)
		if !ok {
			return "", "", "", -1, fmt.Errorf("error.offset is not a non-negative int: %v", e[3].value)
		}
		offset = int(n)
	default:
		return "", "", "", -1, fmt.Errorf("error has keys %v; want code, message, path, and offset exactly for invalid_template", e)
	}
	return strs[0], strs[2], strs[1], offset, nil
}
