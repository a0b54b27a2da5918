package core

import (
	"unicode"
	"unicode/utf8"
)

// This file implements the !r and !a conversions of an observation: CPython
// 3.12's repr(str) (Objects/unicodeobject.c, unicode_repr) and ascii(str)
// (repr, then the "backslashreplace" error handler for every non-ASCII code
// point). The code works on the UTF-8 string directly and never allocates:
// reprScan computes the quote and the size, reprAppend writes the text (or a
// prefix of it, counted in code points, for a format-spec precision) and
// reprPrefixBytes measures such a prefix.
//
// obs is valid UTF-8 by contract. An invalid byte is treated as U+FFFD, the
// same way by all three functions, so sizes always match what is written.

const lowerHex = "0123456789abcdef"

// isPrintable reports whether CPython 3.12's str.isprintable() is true for the
// single code point r: every category except Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs,
// plus the ASCII space. Go's unicode.IsPrint has exactly that definition, and
// both Go's tables and CPython 3.12 use Unicode 15.0.0 (checked over every code
// point against python3.12 in TestPrintableMatchesPython).
func isPrintable(r rune) bool {
	return unicode.IsPrint(r)
}

// reprInfo is the result of reprScan.
type reprInfo struct {
	quote  byte  // '\'' or '"', chosen as CPython chooses it
	nbytes int   // UTF-8 length of the whole repr, quotes included
	nchars int64 // code points of the whole repr, quotes included
}

// decodeObs decodes one code point of obs; an invalid byte reads as U+FFFD of
// width 1.
func decodeObs(s string, i int) (rune, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// escapeLen returns, for the code point r >= 0x7f that is not a quote or
// backslash, the length of its escape in code points (all escapes are ASCII,
// so this is also its length in bytes), or 0 when it is copied as is.
// ascii selects ascii() instead of repr().
func escapeLen(r rune, ascii bool) int {
	if r == 0x7f {
		return 4 // \x7f
	}
	if !ascii && isPrintable(r) {
		return 0
	}
	switch {
	case r <= 0xff:
		return 4 // \xhh
	case r <= 0xffff:
		return 6 // \uhhhh
	default:
		return 10 // \Uhhhhhhhh
	}
}

// reprScan computes the quote character CPython's repr picks for s and the
// size of repr(s) (ascii=false) or ascii(s) (ascii=true).
func reprScan(s string, ascii bool) reprInfo {
	var squote, dquote int
	nbytes, nchars := 2, int64(2) // the two quotes
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '\'':
				squote++
				nbytes++
				nchars++
			case c == '"':
				dquote++
				nbytes++
				nchars++
			case c == '\\' || c == '\t' || c == '\r' || c == '\n':
				nbytes += 2
				nchars += 2
			case c < ' ' || c == 0x7f:
				nbytes += 4
				nchars += 4
			default:
				nbytes++
				nchars++
			}
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		if n := escapeLen(r, ascii); n > 0 {
			nbytes += n
			nchars += int64(n)
		} else {
			nbytes += utf8.RuneLen(r) // U+FFFD for an invalid byte: 3
			nchars++
		}
	}
	q := byte('\'')
	if squote > 0 {
		if dquote > 0 {
			// Both quotes present: CPython keeps ' and escapes it.
			nbytes += squote
			nchars += int64(squote)
		} else {
			q = '"'
		}
	}
	return reprInfo{quote: q, nbytes: nbytes, nchars: nchars}
}

// escapeASCII writes the escape of one code point into buf and returns its
// length, or 0 if r is written as itself (UTF-8). It follows unicode_repr's
// order: the quote and backslash, \t \n \r, \xhh for C0 controls and DEL,
// ASCII as is, then non-printable (repr) or any (ascii) non-ASCII code point as
// \xhh, \uhhhh or \Uhhhhhhhh in lowercase hex.
func escapeRune(buf *[10]byte, r rune, quote byte, ascii bool) int {
	if r < utf8.RuneSelf {
		c := byte(r)
		switch {
		case c == quote || c == '\\':
			buf[0], buf[1] = '\\', c
			return 2
		case c == '\t':
			buf[0], buf[1] = '\\', 't'
			return 2
		case c == '\n':
			buf[0], buf[1] = '\\', 'n'
			return 2
		case c == '\r':
			buf[0], buf[1] = '\\', 'r'
			return 2
		case c < ' ' || c == 0x7f:
			buf[0], buf[1], buf[2], buf[3] = '\\', 'x', lowerHex[c>>4], lowerHex[c&15]
			return 4
		}
		return 0
	}
	n := escapeLen(r, ascii)
	if n == 0 {
		return 0
	}
	buf[0] = '\\'
	switch n {
	case 4:
		buf[1] = 'x'
	case 6:
		buf[1] = 'u'
	default:
		buf[1] = 'U'
	}
	v := uint32(r)
	for k := n - 1; k >= 2; k-- {
		buf[k] = lowerHex[v&15]
		v >>= 4
	}
	return n
}

// reprAppend appends repr(s) or ascii(s) to dst, quoted with info.quote, but
// at most limit code points of it when limit >= 0 (a format-spec precision).
func reprAppend(dst []byte, s string, ascii bool, quote byte, limit int64) []byte {
	if limit == 0 {
		return dst
	}
	left := limit // < 0 means no limit
	dst = append(dst, quote)
	left--
	var buf [10]byte
	for i := 0; i < len(s) && left != 0; {
		r, w := decodeObs(s, i)
		i += w
		n := escapeRune(&buf, r, quote, ascii)
		if n == 0 {
			if r < utf8.RuneSelf {
				dst = append(dst, byte(r))
			} else {
				dst = utf8.AppendRune(dst, r)
			}
			left--
			continue
		}
		if left >= 0 && int64(n) > left {
			n = int(left)
		}
		dst = append(dst, buf[:n]...)
		left -= int64(n)
	}
	if left != 0 {
		dst = append(dst, quote)
	}
	return dst
}

// reprPrefixBytes returns the UTF-8 length of the first limit (>= 0) code
// points of repr(s) or ascii(s) quoted with quote; it writes nothing. limit
// must not exceed the length of the whole repr.
func reprPrefixBytes(s string, ascii bool, quote byte, limit int64) int {
	if limit <= 0 {
		return 0
	}
	left := limit - 1 // opening quote
	nbytes := 1
	var buf [10]byte
	for i := 0; i < len(s) && left > 0; {
		r, w := decodeObs(s, i)
		i += w
		n := escapeRune(&buf, r, quote, ascii)
		if n == 0 {
			nbytes += utf8.RuneLen(r)
			left--
			continue
		}
		if int64(n) > left {
			n = int(left)
		}
		nbytes += n
		left -= int64(n)
	}
	if left > 0 {
		nbytes++ // closing quote
	}
	return nbytes
}
