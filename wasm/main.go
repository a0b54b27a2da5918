//go:build wasip1

// Command wasm is the WebAssembly build of the assembly core: a wasip1 reactor
// that exports core.AssembleBytes over msgpack buffers. See README.md beside
// this file for the ABI.
package main

import (
	"unsafe"

	"github.com/polyloop/assembly/core"
)

// buffers keeps every buffer handed to the host alive (and unmoved) until the
// host gives it back with free or, for a request, with assemble.
var buffers = map[uint32][]byte{}

func pin(b []byte) uint32 {
	if cap(b) == 0 {
		b = make([]byte, 0, 1) // distinct address for empty buffers
	}
	p := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	buffers[p] = b
	return p
}

// alloc returns a buffer of size bytes for the host to write a request into.
//
//go:wasmexport alloc
func alloc(size uint32) uint32 {
	return pin(make([]byte, size))
}

// free releases a buffer returned by alloc or assemble. Unknown pointers are
// ignored.
//
//go:wasmexport free
func free(ptr uint32) {
	delete(buffers, ptr)
}

// assemble reads the request from the alloc'ed buffer at ptr (size bytes),
// releases that buffer, and returns the response as ptr<<32 | len. The host
// copies the response out and then calls free(ptr).
//
//go:wasmexport assemble
func assemble(ptr, size uint32) uint64 {
	req, ok := buffers[ptr]
	delete(buffers, ptr)
	var resp []byte
	if !ok || uint64(size) > uint64(len(req)) {
		resp = core.InternalErrorResponse("assemble: the request buffer was not returned by alloc, or is shorter than the size given")
	} else {
		resp = core.AssembleBytes(req[:size])
	}
	return uint64(pin(resp))<<32 | uint64(len(resp))
}

func main() {}
