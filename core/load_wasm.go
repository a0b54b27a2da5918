package core

import "unsafe"

// load64 and load32 in WebAssembly: a plain i64.load or i32.load
// (WebAssembly memory is little-endian and takes unaligned loads), which
// the compiler also makes of load.go's byte-order form, but at a cost to its
// inliner small enough that the decoder's key and header checks that use
// them are inlined: a call costs in Go's WebAssembly code.

func load64(p unsafe.Pointer) uint64 { return *(*uint64)(p) }

func load32(p unsafe.Pointer) uint32 { return *(*uint32)(p) }
