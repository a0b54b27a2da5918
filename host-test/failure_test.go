package hosttest

import (
	"errors"
	"testing"

	"github.com/polyloop/assembly/core"
	abi "github.com/polyloop/assembly/internal/engine"
	"github.com/polyloop/assembly/wasmhost"
)

// stubModule is a minimal module with every export the engines look for
// (abi.Exports, so it never falls behind the ABI; wasm/README.md "ABI"):
// _initialize does nothing, buffer answers a request buffer of 64 KiB at
// address 1024 (1024<<32 | 65536), and call runs body, a function of type
// (i32, i32) -> i64, for every op.
func stubModule(body ...byte) []byte {
	section := func(id byte, content ...byte) []byte { // the size as unsigned LEB128
		b := []byte{id}
		for n := len(content); ; n >>= 7 {
			if n < 0x80 {
				b = append(b, byte(n))
				break
			}
			b = append(b, byte(n)|0x80)
		}
		return append(b, content...)
	}
	name := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	fn := func(b ...byte) []byte { return append([]byte{byte(len(b) + 1), 0x00}, b...) }
	var exports, code []byte
	types := []byte{} // the type of each function
	add := func(export string, typ byte, f []byte) {
		exports = append(append(exports, name(export)...), 0x00, byte(len(types)))
		types = append(types, typ)
		code = append(code, f...)
	}
	nExports := 1 // memory
	for _, n := range abi.Exports {
		switch n {
		case "memory":
			continue
		case "_initialize":
			add(n, 0, fn(0x0b))
		case "buffer":
			add(n, 1, fn(0x42, 0x80, 0x80, 0x84, 0x80, 0x80, 0x80, 0x01, 0x0b)) // i64.const 1024<<32 | 65536
		case "call":
			add(n, 2, fn(body...))
		default:
			panic("stubModule: an export it does not know: " + n)
		}
		nExports++
	}
	exports = append(append(exports, name("memory")...), 0x02, 0x00)
	m := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}
	m = append(m, section(1, 3, // types: ()->(), (i32)->i64, (i32,i32)->i64
		0x60, 0, 0,
		0x60, 1, 0x7f, 1, 0x7e,
		0x60, 2, 0x7f, 0x7f, 1, 0x7e)...)
	m = append(m, section(3, append([]byte{byte(len(types))}, types...)...)...) // functions
	m = append(m, section(5, 1, 0x00, 2)...)                                    // one memory of two pages
	m = append(m, section(7, append([]byte{byte(nExports)}, exports...)...)...)
	m = append(m, section(10, append([]byte{byte(len(types))}, code...)...)...)
	return m
}

// TestFailureMessages: a module that traps, and one that answers bytes that
// are not a response, give the same internal message on both engines, with
// the engine's words in Detail; the next call gets a fresh instance.
func TestFailureMessages(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		module    []byte
	}{
		{"trap", "the assembly module trapped; the instance was discarded and the next call gets a fresh one",
			stubModule(0x00, 0x0b)}, // unreachable
		{"not a response", "the assembly module returned bytes that are not a response; is the module from the same release as this binding?",
			stubModule(0x42, 0x08, 0x0b)}, // 8 zero bytes at address 0
	} {
		for _, k := range runnerKinds {
			r, err := k.new(wasmhost.Options{Module: tc.module, CacheDir: "-", MaxInstances: 1})
			if err != nil {
				t.Fatalf("%s: %s: %v", k.name, tc.name, err)
			}
			for range 2 { // the second call is served by a fresh instance
				_, err := core.DecodeResponse(r.AssembleBytes([]byte{0x80}))
				var e *core.Error
				if !errors.As(err, &e) || e.Code != core.CodeInternal || e.Path != "" || e.Message != tc.msg {
					t.Fatalf("%s: %s: AssembleBytes: got %v, want internal %q", k.name, tc.name, err, tc.msg)
				}
				_, err = core.DecodeResponse(r.AssembleJSON([]byte("{}")))
				if !errors.As(err, &e) || e.Message != tc.msg {
					t.Fatalf("%s: %s: AssembleJSON: got %v", k.name, tc.name, err)
				}
				_, err = core.DecodeStepResponse(r.AddStepBytes([]byte{0x80}))
				if !errors.As(err, &e) || e.Message != tc.msg {
					t.Fatalf("%s: %s: AddStepBytes: got %v", k.name, tc.name, err)
				}
				_, err = r.Assemble(&core.Request{ObservationTemplate: "{observation}"})
				if !errors.As(err, &e) || e.Message != tc.msg || e.Detail == "" {
					t.Fatalf("%s: %s: Assemble: got %v (detail %q)", k.name, tc.name, err, e.Detail)
				}
				t.Logf("%s: %s: detail %.200q", k.name, tc.name, e.Detail)
			}
			r.Close()
		}
	}
}
