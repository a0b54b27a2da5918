package checks_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// notInModule are packages the WebAssembly module must not link: the core
// reads and writes msgpack with core/msgp and formats its messages
// with core/msgfmt so that none of these comes in (encoding/json with
// reflect-driven decoding and generic sort, fmt with os, time and syscall),
// and the module stays the size its code needs.
var notInModule = []string{
	"encoding/json", "fmt", "sort", "os", "time", "syscall", "encoding/hex",
	"github.com/tinylib/msgp/msgp",
}

// reflectImporters are the packages allowed to import reflect in the module:
// encoding/binary does (for binary.Read and Write, which the core does not
// call, so the linker keeps none of reflect but its init). Any other
// importer would bring reflect's code in.
var reflectImporters = []string{"encoding/binary"}

// TestModuleDeps lists the packages of the module's build (GOOS=wasip1
// GOARCH=wasm go list -deps ./wasm) and fails on those of notInModule and on
// an importer of reflect that reflectImporters does not name.
func TestModuleDeps(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./wasm")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var pkgs []string
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkgs = append(pkgs, fields[0])
		if slices.Contains(fields[1:], "reflect") && !slices.Contains(reflectImporters, fields[0]) {
			t.Errorf("%s imports reflect into the module", fields[0])
		}
	}
	if !slices.Contains(pkgs, "github.com/polyloop/assembly/core") {
		t.Fatalf("the module's packages do not include the core: %q", pkgs)
	}
	var bad []string
	for _, p := range notInModule {
		if slices.Contains(pkgs, p) {
			bad = append(bad, p)
		}
	}
	if len(bad) > 0 {
		t.Errorf("the module links %s; its packages are %s", strings.Join(bad, ", "), strings.Join(pkgs, " "))
	}
}
