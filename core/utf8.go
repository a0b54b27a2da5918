package core

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
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

// validUTF8 reports whether b is valid UTF-8 (surrogates and overlong forms
// rejected), as utf8.Valid does. Unlike utf8.Valid, which leaves its
// eight-bytes-at-a-time ASCII path for good at the first non-ASCII byte, it
// returns to that path after every multi-byte character, so mostly-ASCII text
// with a few accents or symbols stays fast.
func validUTF8(b []byte) bool {
	i := 0
	for i < len(b) {
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:]) & 0x8080808080808080
			if w != 0 {
				i += bits.TrailingZeros64(w) >> 3
				break
			}
			i += 8
		}
		for i < len(b) && b[i] < utf8.RuneSelf {
			i++
		}
		if i >= len(b) {
			return true
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		i += size
	}
	return true
}
