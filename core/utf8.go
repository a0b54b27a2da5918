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

// shortASCII reports whether b starts with a fixstr of at most 16 ASCII
// bytes that b holds whole (most keys and short values), and its length:
// two word loads and masks, no call. It needs 17 readable bytes (a value
// follows a key, so b seldom ends that soon); the callers decode anything
// else the general way.
func shortASCII(b []byte) (int, bool) {
	if len(b) < 17 || b[0]-0xa0 > 16 { // fixstr headers are 0xa0-0xbf
		return 0, false
	}
	m := &strMasks[b[0]&0x1f]
	p := unsafe.Pointer(&b[1])
	return int(b[0] & 0x1f), (load64(p)&m[0]|load64(unsafe.Add(p, 8))&m[1])&0x8080808080808080 == 0
}

// strMasks[n] keeps the first n bytes of two words (n ≤ 16).
var strMasks = func() (m [32][2]uint64) {
	for n := range 17 {
		m[n] = [2]uint64{1<<(8*min(n, 8)) - 1, 1<<(8*max(n-8, 0)) - 1}
	}
	return m
}()
