//go:build !wasm

package core

import (
	"math/bits"
	"unsafe"
)

// utf8Count validates b as UTF-8 exactly as utf8.Valid does (surrogates,
// overlong forms and code points above U+10FFFF rejected) and, in the same
// pass, counts its code points. ASCII goes eight bytes at a time, and the
// loop returns to that path after every multi-byte character, so mostly-ASCII
// text with a few accents or symbols stays fast. A multi-byte character is
// checked with one 4-byte load and masks (no call and few branches per
// character). This is the native form; utf8_wasm.s is the module's.
func utf8Count(b []byte) (n int, ok bool) {
	p := unsafe.Pointer(unsafe.SliceData(b))
	end := len(b)
	i := 0
	// One loop, one back edge per step: a step is eight ASCII bytes, or the
	// ASCII bytes before a multi-byte character and that character. The
	// same step twice per iteration (the checks are explained below): half
	// the back edges (1 MB: 5.4 M → 4.4 M instructions). A step advances at most 11 bytes and reads at
	// most 12.
	for i+24 <= end {
		if w := load64(unsafe.Add(p, i)) & 0x8080808080808080; w == 0 {
			i += 8
			n += 8
		} else {
			k := bits.TrailingZeros64(w) >> 3
			i += k
			n += k + 1
			size := seqLen(load32(unsafe.Add(p, i)))
			if size == 0 {
				return n, false
			}
			i += size
		}
		if w := load64(unsafe.Add(p, i)) & 0x8080808080808080; w == 0 {
			i += 8
			n += 8
		} else {
			k := bits.TrailingZeros64(w) >> 3
			i += k
			n += k + 1
			size := seqLen(load32(unsafe.Add(p, i)))
			if size == 0 {
				return n, false
			}
			i += size
		}
	}
	for i+4 <= end {
		if i+8 <= end {
			w := load64(unsafe.Add(p, i)) & 0x8080808080808080
			if w == 0 {
				i += 8
				n += 8
				continue
			}
			k := bits.TrailingZeros64(w) >> 3
			i += k
			n += k
			if i+4 > end {
				break
			}
		} else if *(*byte)(unsafe.Add(p, i)) < 0x80 {
			i++
			n++
			continue
		}
		n++
		// b[i] >= 0x80 starts a multi-byte character; four bytes are
		// readable.
		size := seqLen(load32(unsafe.Add(p, i)))
		if size == 0 {
			return n, false
		}
		i += size
	}
	// The last three bytes, one character at a time.
	for i < end {
		c := *(*byte)(unsafe.Add(p, i))
		n++
		if c < 0x80 {
			i++
			continue
		}
		size, ok := multiByte(b[i:])
		if !ok {
			return n, false
		}
		i += size
	}
	return n, true
}

// seqLen is the length of the well-formed multi-byte character that x, the
// four bytes from its first (in the low byte), starts; 0 when it is not one.
// Table 3-7 of the Unicode standard lists the well-formed sequences. It is
// inlined into utf8Count's loop (no call).
func seqLen(x uint32) int {
	switch {
	case x&0xc0e0 == 0x80c0: // 110xxxxx 10xxxxxx
		if x&0x1e == 0 { // C0, C1: overlong
			return 0
		}
		return 2
	case x&0xc0c0f0 == 0x8080e0: // 1110xxxx 10xxxxxx 10xxxxxx
		if t := x & 0x200f; t == 0 || t == 0x200d { // E0 80-9F: overlong; ED A0-BF: surrogates
			return 0
		}
		return 3
	case x&0xc0c0c0f8 == 0x808080f0: // 11110xxx 10xxxxxx 10xxxxxx 10xxxxxx
		if cp := (x&7)<<18 | (x>>8&0x3f)<<12; cp < 0x10000 || cp > 0x10ffff { // overlong; above U+10FFFF
			return 0
		}
		return 4
	}
	return 0
}

// multiByte checks the multi-byte character that starts b (b[0] >= 0x80)
// and returns its length.
func multiByte(b []byte) (int, bool) {
	c := b[0]
	var size int
	lo, hi := byte(0x80), byte(0xbf)
	switch {
	case c < 0xc2:
		return 0, false
	case c < 0xe0:
		size = 2
	case c < 0xf0:
		size = 3
		if c == 0xe0 {
			lo = 0xa0
		} else if c == 0xed {
			hi = 0x9f
		}
	case c < 0xf5:
		size = 4
		if c == 0xf0 {
			lo = 0x90
		} else if c == 0xf4 {
			hi = 0x8f
		}
	default:
		return 0, false
	}
	if len(b) < size || b[1] < lo || b[1] > hi {
		return 0, false
	}
	for _, c := range b[2:size] {
		if c&0xc0 != 0x80 {
			return 0, false
		}
	}
	return size, true
}
