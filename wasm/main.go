//go:build wasip1

// Command wasm is the WebAssembly build of the assembly core: a wasip1 reactor
// that exports core.AssembleBytes (and core.AddStepBytes, core.AppendAssembleViewBytes, core.AppendCompareBytes) over msgpack buffers. See README.md beside
// this file for the ABI.
package main

import (
	"unsafe"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/wirejson"
)

// pinned keeps every buffer handed to the host alive (and unmoved) until the
// host gives it back with free or, for a request, with assemble. A host holds
// one or two at a time, so a slice searched linearly beats a map (map
// operations cost hundreds of nanoseconds in Go's WebAssembly code).
var pinned [][]byte

// spare holds up to two buffers the host gave back, reused by the next alloc
// (for a request) and assemble (for a response): a steady stream of calls
// then allocates nothing for its buffers, and the Go heap does not churn
// through a fresh multi-megabyte response per call. Buffers are handed out
// as they are (the ABI never promised zeroed memory).
var spare [2][]byte

func addr(b []byte) uint32 { return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

func pin(b []byte) uint32 {
	if cap(b) == 0 {
		b = make([]byte, 0, 1) // distinct address for empty buffers
	}
	pinned = append(pinned, b)
	return addr(b)
}

// unpin removes the buffer at ptr from pinned and returns it.
func unpin(ptr uint32) ([]byte, bool) {
	for i, b := range pinned {
		if addr(b) == ptr {
			last := len(pinned) - 1
			pinned[i] = pinned[last]
			pinned[last] = nil
			pinned = pinned[:last]
			return b, true
		}
	}
	return nil, false
}

// keep offers b for reuse: it takes an empty slot, or replaces a smaller
// spare.
func keep(b []byte) {
	if cap(b) <= 1 {
		return
	}
	i := 0
	switch {
	case spare[0] == nil:
	case spare[1] == nil, cap(spare[1]) < cap(spare[0]):
		i = 1
	}
	if spare[i] == nil || cap(spare[i]) < cap(b) {
		spare[i] = b
	}
}

// take returns the spare buffer with at least size bytes of capacity (the
// smaller one when both qualify), or, when largest is set, the larger spare
// whatever its size; nil when there is none.
func take(size int, largest bool) []byte {
	i := -1
	for j, b := range spare {
		if b == nil || cap(b) < size {
			continue
		}
		if i < 0 || largest == (cap(b) > cap(spare[i])) {
			i = j
		}
	}
	if i < 0 {
		return nil
	}
	b := spare[i]
	spare[i] = nil
	return b
}

// alloc returns a buffer of size bytes for the host to write a request into.
//
//go:wasmexport alloc
func alloc(size uint32) uint32 {
	if b := take(int(size), false); b != nil && size > 0 {
		return pin(b[:size])
	}
	return pin(make([]byte, size))
}

// free releases a buffer returned by alloc or assemble. Unknown pointers are
// ignored.
//
//go:wasmexport free
func free(ptr uint32) {
	if b, ok := unpin(ptr); ok {
		keep(b)
	}
}

// assemble reads the request from the alloc'ed buffer at ptr (size bytes),
// releases that buffer, and returns the response as ptr<<32 | len. The host
// copies the response out and then calls free(ptr).
//
//go:wasmexport assemble
func assemble(ptr, size uint32) uint64 {
	return answer("assemble", ptr, size, core.AppendAssembleBytes)
}

// assemble_json is assemble for a request written as JSON text (UTF-8): the
// same buffers and result, and the same verdict on JSON text as the
// command-line tool (wirejson.AppendAssemble).
//
//go:wasmexport assemble_json
func assembleJSON(ptr, size uint32) uint64 {
	return answer("assemble_json", ptr, size, wirejson.AppendAssemble)
}

// add_step is assemble for an add_step request (docs/SPEC.md §7.3.1): the
// same buffers, the response of core.AppendAddStepBytes.
//
//go:wasmexport add_step
func addStep(ptr, size uint32) uint64 {
	return answer("add_step", ptr, size, core.AppendAddStepBytes)
}

// prompt_start is assemble for the start of an incremental prompt
// (docs/SPEC.md §7.3.1): the same buffers, the response of
// core.AppendPromptStartBytes (the assemble response with the prompt state).
//
//go:wasmexport prompt_start
func promptStart(ptr, size uint32) uint64 {
	return answer("prompt_start", ptr, size, core.AppendPromptStartBytes)
}

// assemble_view is assemble with the view of its response (docs/SPEC.md
// §7.8): the answer is the response's length (4 bytes, little-endian), the
// response, then the view as JSON text (null for an error response), from
// core.AppendAssembleViewBytes.
//
//go:wasmexport assemble_view
func assembleView(ptr, size uint32) uint64 {
	return answer("assemble_view", ptr, size, core.AppendAssembleViewBytes)
}

// assemble_view_json is assemble_view for a request written as JSON text,
// judged as assemble_json judges it (wirejson.AppendAssembleView).
//
//go:wasmexport assemble_view_json
func assembleViewJSON(ptr, size uint32) uint64 {
	return answer("assemble_view_json", ptr, size, wirejson.AppendAssembleView)
}

// compare answers a compare request (docs/SPEC.md §7.9): a msgpack map
// {a, b} in, the comparison as JSON text out (wirejson.AppendCompare).
//
//go:wasmexport compare
func compare(ptr, size uint32) uint64 {
	return answer("compare", ptr, size, wirejson.AppendCompare)
}

// answer runs one export: the request from the alloc'ed buffer at ptr is
// released, the response appended to a spare buffer by fn is pinned, and
// its place returned as ptr<<32 | len.
func answer(export string, ptr, size uint32, fn func(dst, req []byte) []byte) uint64 {
	req, ok := unpin(ptr)
	var resp []byte
	if !ok || uint64(size) > uint64(len(req)) {
		msg := export + ": the request buffer was not returned by alloc, or is shorter than the size given"
		resp = core.AppendCallError(nil, callOf(export), msg)
	} else {
		resp = fn(take(0, true)[:0], req[:size])
	}
	if ok {
		keep(req) // the response holds no reference into the request
	}
	return uint64(pin(resp))<<32 | uint64(len(resp))
}

// calls is the function of each core.Call (wasm/README.md, "ABI").
var calls = [core.NumCalls]func(dst, req []byte) []byte{
	core.CallAssemble:         core.AppendAssembleBytes,
	core.CallAssembleJSON:     wirejson.AppendAssemble,
	core.CallAddStep:          core.AppendAddStepBytes,
	core.CallAssembleView:     core.AppendAssembleViewBytes,
	core.CallAssembleViewJSON: wirejson.AppendAssembleView,
	core.CallPromptStart:      core.AppendPromptStartBytes,
	core.CallCompare:          wirejson.AppendCompare,
}

func callOf(export string) core.Call {
	for c := range core.NumCalls {
		if c.Name() == export {
			return c
		}
	}
	return core.NumCalls
}

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
	}
	request = request[:cap(request)]
	return uint64(addr(request))<<32 | uint64(len(request))
}

// call runs core.Call op over the first size bytes of the request buffer
// and returns its answer's place in the response buffer as ptr<<32 | len,
// valid until the next call into the module. An unknown op, or a size past
// the request buffer, is answered with an internal error of op's shape.
//
//go:wasmexport call
func call(op, size uint32) uint64 {
	c := core.Call(op)
	switch {
	case c >= core.NumCalls:
		response = core.AppendCallError(response[:0], core.CallAssemble, "call: unknown call number (the module is older than the host)")
	case uint64(size) > uint64(len(request)):
		response = core.AppendCallError(response[:0], c, c.Name()+": the size given is past the request buffer (call buffer first)")
	default:
		response = calls[c](response[:0], request[:size])
	}
	if len(response) == 0 {
		response = append(response, 0)[:0] // an address even for an empty answer
	}
	return uint64(addr(response))<<32 | uint64(len(response))
}

func main() {}
