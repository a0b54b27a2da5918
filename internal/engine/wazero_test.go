package engine

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/internal/testing/benchreq"
)

// exportCounter counts the calls of the module's exported functions (a
// wazero function listener).
type exportCounter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *exportCounter) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	names := def.ExportNames()
	if len(names) == 0 || def.GoFunction() != nil {
		return nil // the module's inner functions and WASI's: not counted
	}
	return experimental.FunctionListenerFunc(func(context.Context, api.Module, api.FunctionDefinition, []uint64, experimental.StackIterator) {
		c.mu.Lock()
		c.calls[names[0]]++
		c.mu.Unlock()
	})
}

// listenedPool is a pool of one wazero instance of wasm whose functions
// report to the listeners of f; it is closed when the test ends.
func listenedPool(t *testing.T, wasm []byte, f experimental.FunctionListenerFactory) *Pool {
	t.Helper()
	ctx := experimental.WithFunctionListenerFactory(context.Background(), f)
	e, err := compileWazero(ctx, wasm, abi.DefaultMemoryLimitBytes/65536, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPool(e, Config{MaxInstances: 1})
	t.Cleanup(func() { p.Close() })
	return p
}

// TestWazeroOneExportCallPerRequest: on the module (wasm/assembly.wasm, `make
// wasm`), an instance calls _initialize once, buffer once (every request
// here fits its first capacity), and call once per request, and no other
// export (no alloc, no free); the answers are the native core's.
func TestWazeroOneExportCallPerRequest(t *testing.T) {
	wasm, err := LoadModule(Config{})
	if err != nil {
		t.Fatal(err)
	}
	counter := &exportCounter{calls: map[string]int{}}
	p := listenedPool(t, wasm, counter)
	reqs := [][]byte{core.EncodeRequest(benchreq.Tiny()), core.EncodeRequest(benchreq.Typical())}
	const n = 20
	for i := range n {
		q := reqs[i%len(reqs)]
		resp, f := p.Call(abi.CallAssemble, q)
		if f != nil || !bytes.Equal(resp, core.AssembleBytes(q)) {
			t.Fatalf("request %d: %v, or the answer differs from the native core's", i, f)
		}
	}
	want := map[string]int{"_initialize": 1, "buffer": 1, "call": n}
	if len(counter.calls) != len(want) {
		t.Fatalf("%d requests called the exports %v, want %v", n, counter.calls, want)
	}
	for name, k := range want {
		if counter.calls[name] != k {
			t.Fatalf("%d requests called the exports %v, want %v", n, counter.calls, want)
		}
	}
}
