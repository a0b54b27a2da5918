// Package jsonstr quotes text as a JSON string the way Python's
// json.dumps(s, ensure_ascii=False) does: `"`, `\` and the C0 controls are
// escaped (\b \f \n \r \t, else \u00xx in lowercase hex); everything else,
// non-ASCII and U+2028/U+2029 included, is written as it is. The core uses it
// for channel names in error paths, the command-line tool for its JSON output.
package jsonstr

import "unsafe"

// Append appends s, quoted, to dst.
func Append(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		for i+8 <= len(s) && plain8(load64(s, i)) { // eight bytes at a time while none needs escaping
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// load64 is the 8 bytes of s at i, little-endian (i+8 <= len(s)).
func load64(s string, i int) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.StringData(s)), i))
}

// plain8 reports whether none of the 8 bytes of w is a C0 control, '"' or
// '\\' (the bytes Append escapes): a byte below 0x20, or one equal to 0x22
// or 0x5c, sets its top bit in the test's word (bytes from 0x80 never do).
func plain8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, b := w^(ones*'"'), w^(ones*'\\')
	return ((w-ones*0x20)|(q-ones)|(b-ones))&^w&highs == 0
}

// Quote returns s quoted.
func Quote(s string) string { return string(Append(make([]byte, 0, len(s)+2), s)) }

// ExcerptChars is how many code points of a value an error message or path
// quotes (docs/SPEC.md §6): a longer value is cut there and "…" (U+2026)
// appended, so that every error response stays a few KB whatever the
// request holds.
const ExcerptChars = 256

// Excerpt returns s when it has at most ExcerptChars code points, else its
// first ExcerptChars code points followed by "…". Invalid UTF-8 counts one
// code point per byte that does not continue a sequence.
func Excerpt(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i]&0xc0 == 0x80 {
			continue
		}
		if n == ExcerptChars {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// QuoteExcerpt returns the excerpt of s, quoted.
func QuoteExcerpt(s string) string { return Quote(Excerpt(s)) }
