package core

import (
	"math/bits"
	"unsafe"
)

// codePoints returns the number of code points of s, which must be valid
// UTF-8 (the decoder and checkRequest ensure it): the bytes that are not
// continuation bytes (10xxxxxx), counted eight at a time.
func codePoints(s string) int {
	p := unsafe.Pointer(unsafe.StringData(s))
	n := len(s)
	cont := 0
	i := 0
	for ; i+32 <= n; i += 32 {
		q := unsafe.Add(p, i)
		cont += contBytes(load64(q)) + contBytes(load64(unsafe.Add(q, 8))) +
			contBytes(load64(unsafe.Add(q, 16))) + contBytes(load64(unsafe.Add(q, 24)))
	}
	for ; i+8 <= n; i += 8 {
		cont += contBytes(load64(unsafe.Add(p, i)))
	}
	for ; i < n; i++ {
		if *(*byte)(unsafe.Add(p, i))&0xc0 == 0x80 {
			cont++
		}
	}
	return n - cont
}

// contBytes counts the bytes of x whose top bits are 10.
func contBytes(x uint64) int {
	return bits.OnesCount64(x &^ (x << 1) & 0x8080808080808080)
}

// validUTF8 reports whether b is valid UTF-8 (surrogates and overlong forms
// rejected), as utf8.Valid does.
func validUTF8(b []byte) bool {
	_, ok := utf8Count(b)
	return ok
}
