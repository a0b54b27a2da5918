package core

import "unsafe"

// load64 and load32 in WebAssembly: a plain i64.load or i32.load
// (WebAssembly memory is little-endian and takes unaligned loads), which
// the compiler also makes of load.go's byte-order form, but at a cost to its
// inliner small enough that the decoder's key and header checks that use
// them are inlined: a call costs in Go's WebAssembly code.

func load64(p unsafe.Pointer) uint64 { return *(*uint64)(p) }

func load32(p unsafe.Pointer) uint32 { return *(*uint32)(p) }

// equalText reports whether a == b, comparing eight bytes at a time: the
// runtime's comparison goes byte by byte in WebAssembly (memeqbody), and
// the module compares the cached template and digest prefix with every
// request.
func equalText(a, b string) bool {
	n := len(a)
	if n != len(b) {
		return false
	}
	p, q := unsafe.Pointer(unsafe.StringData(a)), unsafe.Pointer(unsafe.StringData(b))
	if n < 8 {
		for i := range n {
			if *(*byte)(unsafe.Add(p, i)) != *(*byte)(unsafe.Add(q, i)) {
				return false
			}
		}
		return true
	}
	for i := 0; i < n-8; i += 8 {
		if load64(unsafe.Add(p, i)) != load64(unsafe.Add(q, i)) {
			return false
		}
	}
	return load64(unsafe.Add(p, n-8)) == load64(unsafe.Add(q, n-8)) // the last word, overlapping
}
