package core

import (
	"math"
	"strconv"
	"unicode"
)

// This file parses the format spec of an {observation:...} field the way
// CPython 3.12 parses and applies it to a str: parse_internal_render_format_spec
// and get_integer (Python/formatter_unicode.c), then the checks of
// _PyUnicode_FormatAdvancedWriter and format_string_internal. The grammar is
//
//	[[fill]align][sign][z][#][0][width][,|_][.precision][type]
//
// and for a str every part but fill, align, 0, width, precision and the type
// 's' is rejected, in CPython's order.

// maxFieldWidth is the largest width accepted in a format spec. CPython
// accepts any width that fits in a Py_ssize_t and allocates the padding; this
// engine refuses widths above 1 MiB code points (see the GAP in checkWidth).
const maxFieldWidth = 1 << 20 // 1,048,576

// decimalValue returns the decimal digit value of r as CPython's
// Py_UNICODE_TODECIMAL does (any code point of category Nd), or -1. Every Nd
// range of Unicode 15.0 is a run of complete 0..9 sequences, so the value is
// the distance to the start of the range modulo 10 (checked against
// unicodedata.decimal for every code point in TestDecimalMatchesPython).
func decimalValue(r rune) int {
	if r < 0x80 {
		if '0' <= r && r <= '9' {
			return int(r - '0')
		}
		return -1
	}
	if r <= 0xffff {
		t := unicode.Nd.R16
		lo, hi := 0, len(t)
		for lo < hi {
			m := (lo + hi) / 2
			switch {
			case uint16(r) < t[m].Lo:
				hi = m
			case uint16(r) > t[m].Hi:
				lo = m + 1
			default:
				return int(uint16(r)-t[m].Lo) % 10
			}
		}
		return -1
	}
	t := unicode.Nd.R32
	lo, hi := 0, len(t)
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case uint32(r) < t[m].Lo:
			hi = m
		case uint32(r) > t[m].Hi:
			lo = m + 1
		default:
			return int(uint32(r)-t[m].Lo) % 10
		}
	}
	return -1
}

// getInteger is CPython's get_integer: it consumes decimal digits (category
// Nd) of s from pos, returning the value, the position after them and the
// number consumed. ok is false on Py_ssize_t overflow ("Too many decimal
// digits in format string"), with next at the digit that overflowed.
func getInteger(s []rune, pos int) (value int64, next int, consumed int, ok bool) {
	for next = pos; next < len(s); next++ {
		d := decimalValue(s[next])
		if d < 0 {
			break
		}
		if value > (math.MaxInt64-int64(d))/10 {
			return 0, next, next - pos, false
		}
		value = value*10 + int64(d)
	}
	return value, next, next - pos, true
}

func isAlignToken(r rune) bool { return r == '<' || r == '>' || r == '=' || r == '^' }

// fieldSpec is the parsed format spec of one field, ready for rendering.
type fieldSpec struct {
	fill  rune
	align byte  // '<', '>' or '^'
	width int64 // -1 when absent
	prec  int64 // -1 when absent
}

// parseStrSpec parses spec (the code points between ':' and the closing '}',
// with no braces in it) as CPython formats a str with it. off is the
// template offset of spec[0]. On failure it returns the error and its GAP
// class (gapNone for the rejections CPython makes too).
func parseStrSpec(spec []rune, off int) (fieldSpec, *Error, gapClass) {
	fs := fieldSpec{fill: ' ', align: '<', width: -1, prec: -1}
	if len(spec) == 0 {
		return fs, nil, gapNone
	}
	end := len(spec)
	pos := 0
	fillSpecified, alignSpecified := false, false
	var align rune = '<'
	alignPos := -1
	if end-pos >= 2 && isAlignToken(spec[pos+1]) {
		fs.fill, align = spec[pos], spec[pos+1]
		fillSpecified, alignSpecified = true, true
		alignPos = pos + 1
		pos += 2
	} else if end-pos >= 1 && isAlignToken(spec[pos]) {
		align = spec[pos]
		alignSpecified = true
		alignPos = pos
		pos++
	}
	_ = alignSpecified // for a str the 0 flag never changes the alignment
	signPos, zPos, altPos := -1, -1, -1
	if end-pos >= 1 && (spec[pos] == ' ' || spec[pos] == '+' || spec[pos] == '-') {
		signPos = pos
		pos++
	}
	if end-pos >= 1 && spec[pos] == 'z' {
		zPos = pos
		pos++
	}
	if end-pos >= 1 && spec[pos] == '#' {
		altPos = pos
		pos++
	}
	// The 0 flag (backwards compatibility): fill with '0'. CPython switches
	// to '=' alignment only for types that align right by default; a str
	// aligns left, so the alignment stays as given (default '<').
	if !fillSpecified && end-pos >= 1 && spec[pos] == '0' {
		fs.fill = '0'
		pos++
	}
	widthPos := pos
	w, next, consumed, ok := getInteger(spec, pos)
	if !ok {
		return fs, tmplErr(off+widthPos, "the width at offset %d has too many digits (the largest CPython accepts is 9223372036854775807, this engine 1048576); use a smaller width", off+widthPos), gapNone
	}
	pos = next
	if consumed > 0 {
		fs.width = w
	}
	groupPos := -1
	var group rune
	if end-pos >= 1 && spec[pos] == ',' {
		group, groupPos = ',', pos
		pos++
	}
	if end-pos >= 1 && spec[pos] == '_' {
		if group != 0 {
			return fs, tmplErr(off+pos, "both ',' and '_' at offset %d; a text field takes no grouping option, remove them", off+pos), gapNone
		}
		group, groupPos = '_', pos
		pos++
	}
	if end-pos >= 1 && spec[pos] == ',' && group == '_' {
		return fs, tmplErr(off+pos, "both ',' and '_' at offset %d; a text field takes no grouping option, remove them", off+pos), gapNone
	}
	if end-pos >= 1 && spec[pos] == '.' {
		dot := pos
		pos++
		p, next, consumed, ok := getInteger(spec, pos)
		if !ok {
			return fs, tmplErr(off+pos, "the precision at offset %d has too many digits (the largest is 9223372036854775807); use a smaller precision", off+pos), gapNone
		}
		if consumed == 0 {
			return fs, tmplErr(off+dot, "'.' at offset %d is not followed by a precision; write the number of code points to keep, as in {observation:.100}, or remove the '.'", off+dot), gapNone
		}
		fs.prec = p
		pos = next
	}
	if end-pos > 1 {
		return fs, tmplErr(off+pos, "invalid format spec %s: unexpected %s at offset %d; the form is [[fill]align][0][width][.precision][s]", quoteRunes(spec), quoteRunes(spec[pos:]), off+pos), gapNone
	}
	typ := rune('s')
	typePos := -1
	if end-pos == 1 {
		typ, typePos = spec[pos], pos
	}
	if group != 0 {
		// CPython allows ',' and '_' only with numeric types (all of which
		// a str then refuses); with 's' it raises "Cannot specify ...".
		return fs, tmplErr(off+groupPos, "grouping option %s at offset %d is not allowed for text; remove it", quoteRune(group), off+groupPos), gapNone
	}
	if typ != 's' {
		return fs, tmplErr(off+typePos, "format type %s at offset %d is not allowed for text; use 's' or no type", quoteRune(typ), off+typePos), gapNone
	}
	if signPos >= 0 {
		return fs, tmplErr(off+signPos, "sign %s at offset %d is not allowed for text; remove it", quoteRune(spec[signPos]), off+signPos), gapNone
	}
	if zPos >= 0 {
		return fs, tmplErr(off+zPos, "'z' (negative zero coercion) at offset %d is not allowed for text; remove it", off+zPos), gapNone
	}
	if altPos >= 0 {
		return fs, tmplErr(off+altPos, "'#' (alternate form) at offset %d is not allowed for text; remove it", off+altPos), gapNone
	}
	if align == '=' {
		return fs, tmplErr(off+alignPos, "'=' alignment at offset %d is not allowed for text; use '<', '>' or '^'", off+alignPos), gapNone
	}
	// GAP: CPython accepts any width up to 2**63-1 and allocates the padding
	// (or raises MemoryError); this engine refuses widths above 1,048,576 so
	// that a template can never make a host allocate gigabytes per step.
	if fs.width > maxFieldWidth {
		return fs, tmplErr(off+widthPos, gapPrefix+"width %d at offset %d is above the maximum %d; use a width of at most %d", fs.width, off+widthPos, maxFieldWidth, maxFieldWidth), gapWidth
	}
	fs.align = byte(align)
	return fs, nil, gapNone
}

// quoteRune quotes one code point for a message, e.g. 'd' or '\x00'.
func quoteRune(r rune) string { return strconv.QuoteRune(r) }

// quoteRunes quotes text for a message.
func quoteRunes(s []rune) string { return strconv.Quote(string(s)) }
