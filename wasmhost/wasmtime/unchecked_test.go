package wasmtime

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	wt "github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/internal/engine"
	"github.com/polyloop/assembly/internal/testing/benchreq"
	"github.com/polyloop/assembly/wasmhost"
)

// newTestInstance instantiates the module (wasm/assembly.wasm, `make wasm`)
// under a memory limit, compiled through the default cache.
func newTestInstance(t *testing.T, limit uint64) *instance {
	t.Helper()
	e, err := open(engine.Config{MemoryLimitBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	inst, err := e.NewInstance()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(inst.Close)
	return inst.(*instance)
}

// TestUncheckedLayout: wt.Func and wt.Memory are still the C API's values
// of the sizes unchecked.go copies (a wasmtime-go release that changed them
// fails here, and open refuses to run).
func TestUncheckedLayout(t *testing.T) {
	if err := checkLayout(); err != nil {
		t.Fatal(err)
	}
}

// TestUncheckedIsFuncCall: on one instance, the unchecked calls answer what
// Func.Call answers (buffer's place, call's answer, equal to the native
// core's), and the memory they read is Memory.UnsafeData's, also after the
// buffer grew past its first capacity and memory grew.
func TestUncheckedIsFuncCall(t *testing.T) {
	i := newTestInstance(t, 0)
	k := i.calls
	for _, n := range []benchreq.Named{{Name: "typical", Request: benchreq.Typical()}, {Name: "1MB", Request: benchreq.Sized(1 << 20)}} {
		req := core.EncodeRequest(n.Request)
		want := core.AssembleBytes(req)
		v, err := k.buffer.Call(i.store, int32(len(req)))
		if err != nil {
			t.Fatalf("%s: Func.Call of buffer: %v", n.Name, err)
		}
		ptr, capacity, err := i.Buffer(uint32(len(req)))
		if err != nil || uint64(v.(int64)) != uint64(ptr)<<32|uint64(capacity) {
			t.Fatalf("%s: buffer: unchecked %d<<32|%d (%v), Func.Call %#x", n.Name, ptr, capacity, err, v)
		}
		checkMemory(t, i)
		if err := i.Write(ptr, req); err != nil {
			t.Fatal(err)
		}
		v, err = k.call.Call(i.store, int32(abi.CallAssemble), int32(len(req)))
		if err != nil {
			t.Fatalf("%s: Func.Call of call: %v", n.Name, err)
		}
		packed := uint64(v.(int64))
		viaFuncCall := bytes.Clone(k.mem.UnsafeData(i.store)[packed>>32 : packed>>32+packed&0xffffffff])
		packed, err = i.Call(abi.CallAssemble, uint32(len(req)))
		if err != nil {
			t.Fatalf("%s: unchecked call: %v", n.Name, err)
		}
		checkMemory(t, i)
		got, err := i.Read(uint32(packed>>32), uint32(packed))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || !bytes.Equal(viaFuncCall, want) {
			t.Fatalf("%s: the unchecked call (%d bytes) or Func.Call (%d bytes) differs from the native core's %d bytes", n.Name, len(got), len(viaFuncCall), len(want))
		}
	}
}

// checkMemory: the memory the last unchecked call left is the memory's
// data, at the same base and of the same size.
func checkMemory(t *testing.T, i *instance) {
	t.Helper()
	got, want := i.calls.memory(), i.calls.mem.UnsafeData(i.store)
	if len(got) != len(want) || &got[0] != &want[0] {
		t.Fatalf("the unchecked call left memory at %p (%d bytes), Memory.UnsafeData says %p (%d bytes)", &got[0], len(got), &want[0], len(want))
	}
}

// TestUncheckedTrapIsFuncCall: a call that traps (the buffer of 1 GiB under
// a 64 MiB memory limit runs the module out of memory) gives the same error
// text through the unchecked call as through Func.Call, on two instances
// alike, up to the host's native stack (its frames differ by the caller),
// and the module says out of memory on its stderr.
func TestUncheckedTrapIsFuncCall(t *testing.T) {
	a, b := newTestInstance(t, 64<<20), newTestInstance(t, 64<<20)
	_, want := a.calls.buffer.Call(a.store, int32(1<<30))
	_, _, got := b.Buffer(1 << 30)
	if want == nil || got == nil || wasmPart(got) != wasmPart(want) || !strings.Contains(got.Error(), "wasm trap: ") {
		t.Fatalf("a trap: unchecked %q, Func.Call %q", got, want)
	}
	if trap, ok := want.(*wt.Trap); ok {
		trap.Close() // now, not in a finalizer during a later test
	}
	if s := b.Stderr(); !bytes.Contains([]byte(s), []byte("out of memory")) {
		t.Fatalf("the module's stderr after the trap: %q", s)
	}
	t.Logf("trap: %.200q", got)
}

// wasmPart is a wasmtime error's text before the host's native stack.
func wasmPart(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n\nStack backtrace:")
	return s
}

// TestOneCgoCallPerRequest: once an instance is warm and its request buffer
// sized, a request costs exactly one cgo call (the process's count of cgo
// calls, runtime.NumCgoCall), and is answered as the native core answers it.
// The count is the process's: a wasmtime-go finalizer running meanwhile
// (garbage of the tests before) adds to it, never takes away, so the best of
// three tries is the requests' own.
func TestOneCgoCallPerRequest(t *testing.T) {
	r, err := New(wasmhost.Options{MaxInstances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	reqs := [][]byte{core.EncodeRequest(benchreq.Tiny()), core.EncodeRequest(benchreq.Typical())}
	for _, q := range reqs {
		r.AssembleBytes(q) // instantiates, sizes the buffer
	}
	const n = 50
	best := int64(-1)
	for range 3 {
		runtime.GC()
		before := runtime.NumCgoCall()
		for i := range n {
			q := reqs[i%len(reqs)]
			if got := r.AssembleBytes(q); !bytes.Equal(got, core.AssembleBytes(q)) {
				t.Fatalf("request %d: the answer differs from the native core's", i)
			}
		}
		if calls := runtime.NumCgoCall() - before; best < 0 || calls < best {
			best = calls
		}
	}
	if best != n {
		t.Fatalf("%d requests made %d cgo calls (the best of three tries), want %d", n, best, n)
	}
}
