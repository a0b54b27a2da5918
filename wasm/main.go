//go:build wasip1

// Command wasm is the WebAssembly build of the assembly core: a wasip1 reactor
// that exports core.AssembleBytes (and core.AddStepBytes, core.AppendAssembleViewBytes, core.AppendCompareBytes) over msgpack buffers. See README.md beside
// this file for the ABI.
package main

import (
	"strings"
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
		e := &core.Error{Code: core.CodeInternal, Message: msg, Offset: -1}
		switch {
		case strings.HasPrefix(export, "assemble_view"):
			resp = core.AppendErrorView(nil, e) // an answer of its shape
		case export == "compare":
			resp = core.AppendCompareError(nil, e)
		default:
			resp = core.InternalErrorResponse(msg)
		}
	} else {
		resp = fn(take(0, true)[:0], req[:size])
	}
	if ok {
		keep(req) // the response holds no reference into the request
	}
	return uint64(pin(resp))<<32 | uint64(len(resp))
}

func main() {}
