//go:build wasip1

// Command wasm is the WebAssembly build of the assembly core: a wasip1 reactor
// whose one call export runs a call of the contract's table (abi.Calls;
// the function of each is package dispatch's) over two buffers the module owns
// and reuses, so a request costs the host one crossing. See README.md beside
// this file for the ABI.
package main

import (
	"runtime"
	"unsafe"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/wasm/dispatch"
)

func addr(b []byte) uint32 { return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

// request and response are the module's own buffers of the one-crossing
// ABI: the host writes a request into request (made big enough by buffer)
// and reads the answer of call from response, which the next call reuses.
var request, response []byte

// minRequestBuffer is the smallest request buffer buffer makes: most
// requests fit, so a host asks for one once.
const minRequestBuffer = 64 << 10

// buffer makes the request buffer hold at least size bytes and returns its
// place as ptr<<32 | capacity. The buffer stays where it is until the next
// buffer call that asks for more than its capacity; its bytes are not zeroed.
//
//go:wasmexport buffer
func buffer(size uint32) uint64 {
	if uint64(cap(request)) < uint64(size) || request == nil {
		request = nil // the old buffer is garbage before the new one is made
		request = make([]byte, max(int(size), minRequestBuffer))
		runtime.Gosched() // an allocation: let a collection it started finish (letGCFinish)
	}
	request = request[:cap(request)]
	return uint64(addr(request))<<32 | uint64(len(request))
}

// call runs call op (abi.Calls) over the first size bytes of the request
// buffer and returns its answer's place in the response buffer as
// ptr<<32 | len, valid until the next call into the module. An unknown op,
// or a size past the request buffer, is answered with an internal error of
// op's shape.
//
//go:wasmexport call
func call(op, size uint32) uint64 {
	c := abi.Call(op)
	capBefore := cap(response)
	if c.Base() < abi.NumCalls && uint64(size) > uint64(len(request)) {
		response = core.AppendCallError(response[:0], c, c.Name()+": the size given is past the request buffer (call buffer first)")
	} else {
		response = dispatch.Append(c, response[:0], request[:min(uint64(size), uint64(len(request)))])
	}
	if len(response) == 0 {
		response = append(response, 0)[:0] // an address even for an empty answer
	}
	letGCFinish(size, cap(response) != capBefore)
	return uint64(addr(response))<<32 | uint64(len(response))
}

// letGCFinish yields to the runtime's other goroutines when a garbage
// collection is marking (the write barriers are on) at the end of a call,
// and after a call that may have started one: a request of 64 KiB or more,
// or an answer that outgrew the response buffer. A collection marks on a
// background goroutine, which in a reactor gets the one thread only when
// the running code yields, and the exports never block: without this, a
// collection started by a call stays in its mark phase for the life of the
// instance, and every later call pays the write barriers that marking turns
// on (about twice a typical request's time, measured under wasmtime;
// internal/engine's TestWazeroGCFinishesBetweenCalls counts the barriers).
// One yield gives the collection's worker its share of the time, which
// usually ends the marking. A yield costs about as much as a small call's
// own work, hence only then: yielding every 16th call instead cost the tiny
// round trip ~4-7 %, and left collections started by small calls marking
// for more calls after them (five per collection against under one).
func letGCFinish(size uint32, grew bool) {
	if writeBarrier.enabled || size >= yieldAbove || grew {
		runtime.Gosched()
	}
}

// writeBarrier is the runtime's flag that a collection is marking (Go
// exports it for linkname, go.dev/issue/67401; the compiler checks its
// first byte before every pointer write).
//
//go:linkname writeBarrier runtime.writeBarrier
var writeBarrier struct {
	enabled bool
	pad     [3]byte
	alignme uint64
}

const yieldAbove = 64 << 10 // request bytes

func main() {}
