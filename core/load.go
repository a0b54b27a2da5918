//go:build !wasm

package core

import (
	"encoding/binary"
	"unsafe"
)

// load64 returns the eight bytes at p as a little-endian word: one 8-byte load
// and no bounds check; the caller guarantees that eight bytes are readable
// at p. (load_wasm.go is the WebAssembly form.)
func load64(p unsafe.Pointer) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(p)[:])
}

// load32 returns the four bytes at p as a little-endian word.
func load32(p unsafe.Pointer) uint32 {
	return binary.LittleEndian.Uint32((*[4]byte)(p)[:])
}

// equalText reports whether a == b (load_wasm.go has the WebAssembly form).
func equalText(a, b string) bool { return a == b }
