package engine

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/internal/testing/benchreq"
	"github.com/polyloop/assembly/wirejson"
)

// barrierCounter counts the calls of the Go runtime's write barriers in the
// module: gcWriteBarrierN, which compiled code calls only while a garbage
// collection marks, and wbBufFlush, which they call when their buffer
// fills. (bulkBarrierPreWrite is called always and returns at once when
// no collection marks: not counted.) It also counts the collections
// started (gcStart).
type barrierCounter struct{ calls, starts atomic.Int64 }

func (c *barrierCounter) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	name := def.DebugName()
	if strings.HasSuffix(name, "runtime.gcStart") {
		return experimental.FunctionListenerFunc(func(context.Context, api.Module, api.FunctionDefinition, []uint64, experimental.StackIterator) {
			c.starts.Add(1)
		})
	}
	if !strings.Contains(name, "gcWriteBarrier") && !strings.Contains(name, "wbBufFlush") {
		return nil
	}
	return experimental.FunctionListenerFunc(func(context.Context, api.Module, api.FunctionDefinition, []uint64, experimental.StackIterator) {
		c.calls.Add(1)
	})
}

// unstrippedModule builds ./wasm as make wasm does but keeps the function
// names (the name section), so a listener can tell the runtime's functions.
func unstrippedModule(t *testing.T) []byte {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "named.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", out, "./wasm")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the module with its names: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWazeroGCFinishesBetweenCalls: a request large enough to start a
// garbage collection inside the module must not leave it marking (the
// write barriers on) for the calls after it: the collection's background
// worker runs only when the module's code yields, which its exports do
// before they return (wasm/main.go, letGCFinish). Before that, every call
// after an 8 MB request ran the barriers, at twice a typical request's time.
func TestWazeroGCFinishesBetweenCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the module's build with names")
	}
	counter := &barrierCounter{}
	wasm := unstrippedModule(t)
	// A small request with a large answer: its template repeats the
	// observation, so the answer (~6 MB) outgrows the response buffer.
	echo := benchreq.React(8, 4096)
	echo.ObservationTemplate = strings.Repeat("{observation}", 200)
	echo.MaxPromptChars = nil
	for _, big := range []struct {
		name string
		req  []byte
	}{
		{"an 8 MB request", core.EncodeRequest(benchreq.Sized(8 << 20))},
		{"a small request with a 6 MB answer", core.EncodeRequest(echo)},
	} {
		t.Run(big.name, func(t *testing.T) { gcFinishesAfter(t, listenedPool(t, wasm, counter), counter, big.req) })
	}
	t.Run("small calls that allocate", func(t *testing.T) { gcFinishesAfterSmall(t, listenedPool(t, wasm, counter), counter) })
}

// gcFinishesAfterSmall: collections started by small calls (neither large
// nor outgrowing the response buffer) must not outlive them by more than a
// call or two. A typical request as JSON text allocates (~60 objects, in
// wirejson), so a stream of them starts a collection every ~180 calls;
// between two such calls, a typical msgpack call, which allocates nothing,
// runs with the write barriers on only if a collection is still marking.
// Measured over 4,000 pairs (23-24 collections): when the exports yielded
// every 16th call, 119-131 typical calls ran the barriers (five per
// collection); yielding whenever a collection marks as a call returns,
// 0-14, quiet or with both cores busy (the one yield gives the collection's
// worker its share of the time, which usually ends the marking). The bound
// is two per collection, and at least ten collections must have started.
func gcFinishesAfterSmall(t *testing.T, p *Pool, counter *barrierCounter) {
	typical := core.EncodeRequest(benchreq.Typical())
	want := core.AssembleBytes(typical)
	js := benchreq.JSONText(benchreq.Typical())
	wantJSON := wirejson.AppendAssemble(nil, js)
	const pairs = 4000
	counter.starts.Store(0)
	marking := 0 // typical calls that ran the barriers
	for i := range pairs {
		if resp, f := p.Call(abi.CallAssembleJSON, js); f != nil || !bytes.Equal(resp, wantJSON) {
			t.Fatalf("call %d (JSON): %v, or the answer differs from the native core's", i, f)
		}
		counter.calls.Store(0)
		if resp, f := p.Call(abi.CallAssemble, typical); f != nil || !bytes.Equal(resp, want) {
			t.Fatalf("call %d: %v, or the answer differs from the native core's", i, f)
		}
		if counter.calls.Load() != 0 {
			marking++
		}
	}
	starts := int(counter.starts.Load())
	if starts < 10 {
		t.Fatalf("only %d collections started in %d JSON calls: the check proves little (allocate more)", starts, pairs)
	}
	if marking > 2*starts {
		t.Fatalf("%d of %d typical calls ran the write barriers, after %d collections started by small calls: they mark for calls after the one that started them", marking, pairs, starts)
	}
	t.Logf("%d collections; %d of %d typical calls between them ran the barriers", starts, marking, pairs)
}

// gcFinishesAfter checks, three times over, that a call of req on p leaves
// no collection marking: the typical call right after it runs no write
// barriers (the large call yielded before it returned) in at least two of
// the three rounds (under load the collection's worker may get its yield
// late once), and the 20 from the 21st on run none in every round.
func gcFinishesAfter(t *testing.T, p *Pool, counter *barrierCounter, req []byte) {
	typical := core.EncodeRequest(benchreq.Typical())
	want := core.AssembleBytes(typical)
	leftMarking := 0 // rounds whose first typical call ran the barriers
	for round := range 3 {
		if resp, f := p.Call(abi.CallAssemble, req); f != nil || !bytes.Equal(resp, core.AssembleBytes(req)) {
			t.Fatalf("round %d: the large call: %v, or the answer differs from the native core's", round, f)
		}
		for i := range 41 {
			if i == 0 || i == 21 {
				counter.calls.Store(0)
			}
			if resp, f := p.Call(abi.CallAssemble, typical); f != nil || !bytes.Equal(resp, want) {
				t.Fatalf("round %d, call %d: %v, or the answer differs from the native core's", round, i, f)
			}
			if n := counter.calls.Load(); i == 0 && n != 0 {
				leftMarking++ // once may be the machine's load delaying the collection's worker
			}
		}
		if n := counter.calls.Load(); n != 0 {
			t.Fatalf("round %d: the 20 typical calls from the 22nd after it called the write barriers %d times: a collection is still marking", round, n)
		}
	}
	if leftMarking > 1 {
		t.Fatalf("in %d of 3 rounds the typical call right after the large one called the write barriers: the large call leaves a collection marking", leftMarking)
	}
}
