package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository root, from this package's directory.
const root = "../.."

// TestGeneratedFilesAreCurrent regenerates every file into memory and
// compares it with the file in the tree: a change to a constant in Go must
// be followed by `go generate ./...`.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	want, err := files()
	if err != nil {
		t.Fatal(err)
	}
	for path, b := range want {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
		if err != nil {
			t.Errorf("%s: %v; run `go generate ./...` from the repository root", path, err)
			continue
		}
		if !bytes.Equal(got, b) {
			t.Errorf("%s is stale (not what tools/genconsts writes from the Go constants); run `go generate ./...` from the repository root", path)
		}
		if !bytes.HasPrefix(got, []byte("# "+header+"\n")) && !bytes.HasPrefix(got, []byte("// "+header+"\n")) {
			t.Errorf("%s does not start with the generated-code header", path)
		}
	}
}

// TestFormatPieces checks the JavaScript functions' construction against
// Go's fmt: the literal pieces joined by the arguments are fmt.Sprintf's text.
func TestFormatPieces(t *testing.T) {
	extra := format{name: "X", value: "100%% of %s is %d%%", args: []string{"a", "b"}}
	for _, f := range append(formats, extra) {
		pieces, verbs, err := parse(f)
		if err != nil {
			t.Fatal(err)
		}
		args := make([]any, len(verbs))
		var b strings.Builder
		for i, p := range pieces {
			if i > 0 {
				fmt.Fprint(&b, args[i-1])
			}
			b.WriteString(p)
			if i < len(verbs) {
				args[i] = map[byte]any{'d': 1 << 40, 's': "s%d\"é"}[verbs[i]]
			}
		}
		if want := fmt.Sprintf(f.value, args...); b.String() != want {
			t.Errorf("%s: pieces give %q, fmt gives %q", f.name, b.String(), want)
		}
	}
}

// TestParseRejects: a verb the bindings cannot apply the same way, or a
// count of arguments that does not match, is an error of the generator.
func TestParseRejects(t *testing.T) {
	for _, f := range []format{
		{name: "x", value: "%v", args: []string{"a"}},
		{name: "x", value: "%5d", args: []string{"a"}},
		{name: "x", value: "%d and %s", args: []string{"a"}},
		{name: "x", value: "end %", args: nil},
	} {
		if _, _, err := parse(f); err == nil {
			t.Errorf("parse(%q) is no error", f.value)
		}
	}
}

func TestCamel(t *testing.T) {
	if got := camel("error_type_name"); got != "errorTypeName" {
		t.Errorf("camel = %q", got)
	}
}

// TestSpecCitationsSayWhere: the wheel and the npm package that ship the
// generated files do not carry docs/SPEC.md, so each citation of it says it
// is in the source repository.
func TestSpecCitationsSayWhere(t *testing.T) {
	out, err := files()
	if err != nil {
		t.Fatal(err)
	}
	cite := regexp.MustCompile(`docs/SPEC\.md §[0-9.]+, in the source repository`)
	for path, b := range out {
		if strings.HasSuffix(path, ".go") {
			continue // the core's own source, beside docs/
		}
		all, said := strings.Count(string(b), "docs/SPEC.md"), len(cite.FindAll(b, -1))
		if all == 0 || said != all {
			t.Errorf("%s: %d of its %d citations of docs/SPEC.md say it is in the source repository", path, said, all)
		}
	}
}
