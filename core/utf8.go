package core

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// codePoints returns the number of code points of s, which must be valid
// UTF-8 (the decoder and checkRequest ensure it): the bytes that are not
// continuation bytes (10xxxxxx), counted eight at a time.
func codePoints(s string) int {
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	cont := 0
	i := 0
	for ; i+32 <= len(b); i += 32 {
		cont += contBytes(binary.LittleEndian.Uint64(b[i:])) + contBytes(binary.LittleEndian.Uint64(b[i+8:])) +
			contBytes(binary.LittleEndian.Uint64(b[i+16:])) + contBytes(binary.LittleEndian.Uint64(b[i+24:]))
	}
	for ; i+8 <= len(b); i += 8 {
		cont += contBytes(binary.LittleEndian.Uint64(b[i:]))
	}
	for ; i < len(b); i++ {
		if b[i]&0xc0 == 0x80 {
			cont++
		}
	}
	return len(b) - cont
}

// contBytes counts the bytes of x whose top bits are 10.
func contBytes(x uint64) int {
	return bits.OnesCount64(x &^ (x << 1) & 0x8080808080808080)
}
