package abi_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/polyloop/assembly/core/abi"
)

// TestCallsTable: each row sits at its op, names are unique snake_case
// words (the bindings make CALL_<NAME> of them), shapes are named, and a
// number past the table has the name messages use for it.
func TestCallsTable(t *testing.T) {
	word := regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	seen := map[string]bool{}
	for i, c := range abi.Calls {
		if c.Op != abi.Call(i) {
			t.Errorf("row %d holds op %d", i, c.Op)
		}
		if !word.MatchString(c.Name) || seen[c.Name] {
			t.Errorf("row %d: name %q is not a new snake_case word", i, c.Name)
		}
		seen[c.Name] = true
		if c.Doc == "" || c.Arg >= abi.NumArgs || c.Answer >= abi.NumAnswers {
			t.Errorf("row %d (%s): doc %q, arg %d, answer %d", i, c.Name, c.Doc, c.Arg, c.Answer)
		}
		if c.Op.Name() != c.Name {
			t.Errorf("Call(%d).Name() = %q, want %q", i, c.Op.Name(), c.Name)
		}
	}
	if got := abi.NumCalls.Name(); got != "call" {
		t.Errorf("a number past the table is named %q", got)
	}
}

// TestCacheSeal: the seal's binding and the size bound, against the bytes
// the cache files of earlier releases were sealed with (the Python binding
// typed them by hand: b"polyloop-assembly cwasm v1\n%s\nwasmtime-%s\n",
// 16 * size + (16 << 20)).
func TestCacheSeal(t *testing.T) {
	if got := fmt.Sprintf(abi.CacheSealBindingFormat, "ab12", "wasmtime-39.0.0"); got != "polyloop-assembly cwasm v1\nab12\nwasmtime-39.0.0\n" {
		t.Errorf("binding %q", got)
	}
	if got := abi.CacheFileLimit(2_754_875); got != 44_078_000+16_777_216 {
		t.Errorf("CacheFileLimit = %d", got)
	}
	if len(abi.CacheSealMagic) != 16 || abi.CacheKeep != 4 {
		t.Errorf("magic %q, keep %d", abi.CacheSealMagic, abi.CacheKeep)
	}
}
