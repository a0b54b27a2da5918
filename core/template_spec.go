package core

import (
	"math"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/polyloop/assembly/core/jsonstr"
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
		return digitIn(len(t), uint32(r), func(m int) (lo, hi uint32) { return uint32(t[m].Lo), uint32(t[m].Hi) })
	}
	t := unicode.Nd.R32
	return digitIn(len(t), uint32(r), func(m int) (lo, hi uint32) { return t[m].Lo, t[m].Hi })
}

// digitIn searches the n sorted ranges of a table (rng gives the bounds of
// the m-th) for r and returns its digit value, or -1.
func digitIn(n int, r uint32, rng func(m int) (lo, hi uint32)) int {
	lo, hi := 0, n
	for lo < hi {
		m := (lo + hi) / 2
		switch l, h := rng(m); {
		case r < l:
			hi = m
		case r > h:
			lo = m + 1
		default:
			return int(r-l) % 10
		}
	}
	return -1
}

// getInteger is CPython's get_integer: it consumes decimal digits (category
// Nd) of s from byte offset pos, returning the value, the byte offset after
// them and the number of digits consumed. ok is false on Py_ssize_t overflow
// ("Too many decimal digits in format string"), with next at the digit that
// overflowed.
func getInteger(s string, pos int) (value int64, next int, consumed int, ok bool) {
	for next = pos; next < len(s); {
		r, w := utf8.DecodeRuneInString(s[next:])
		d := decimalValue(r)
		if d < 0 {
			break
		}
		if value > (math.MaxInt64-int64(d))/10 {
			return 0, next, consumed, false
		}
		value = value*10 + int64(d)
		next += w
		consumed++
	}
	return value, next, consumed, true
}

func isAlignToken(c byte) bool { return c == '<' || c == '>' || c == '=' || c == '^' }

// fieldSpec is the parsed format spec of one field, ready for rendering.
type fieldSpec struct {
	fill  rune
	align byte  // '<', '>' or '^'
	width int64 // -1 when absent
	prec  int64 // -1 when absent
}

// parseStrSpec parses spec (the text between ':' and the closing '}', with
// no braces in it) as CPython formats a str with it. off is the template's
// code-point offset of spec[0]; positions in spec are byte offsets (every
// character the grammar names but the fill, the digits and the type is
// ASCII). On failure it returns the error and its GAP class (gapNone for the
// rejections CPython makes too).
func parseStrSpec(spec string, off int) (fieldSpec, *Error, gapClass) {
	sp := specParts{
		spec: spec, off: off, fs: fieldSpec{fill: ' ', align: '<', width: -1, prec: -1},
		align: '<', alignPos: -1, signPos: -1, zPos: -1, altPos: -1, groupPos: -1, typ: 's', typePos: -1,
	}
	if len(spec) == 0 {
		return sp.fs, nil, gapNone
	}
	pos := sp.scanHead()
	if err := sp.scanTail(pos); err != nil {
		return sp.fs, err, gapNone
	}
	return sp.check()
}

// specParts is a format spec as scanned: what it says and where (byte
// positions in spec, -1 when absent), before the checks of a str.
type specParts struct {
	spec                                      string
	off                                       int // code-point offset of spec[0] in the template
	fs                                        fieldSpec
	align, group                              byte
	typ                                       rune
	alignPos, signPos, zPos, altPos, groupPos int
	widthPos, typePos                         int
}

// at is the template's code-point offset of spec[pos].
func (sp *specParts) at(pos int) int { return sp.off + utf8.RuneCountInString(sp.spec[:pos]) }

// scanHead scans [[fill]align][sign][z][#][0] and returns the position
// after it.
func (sp *specParts) scanHead() int {
	spec, end, pos := sp.spec, len(sp.spec), 0
	fillSpecified := false // for a str the 0 flag never changes the alignment: only the fill matters
	if r, w := utf8.DecodeRuneInString(spec); w < end && isAlignToken(spec[w]) {
		sp.fs.fill, sp.align = r, spec[w]
		fillSpecified = true
		sp.alignPos = w
		pos = w + 1
	} else if isAlignToken(spec[0]) {
		sp.align = spec[0]
		sp.alignPos = 0
		pos = 1
	}
	if pos < end && (spec[pos] == ' ' || spec[pos] == '+' || spec[pos] == '-') {
		sp.signPos = pos
		pos++
	}
	if pos < end && spec[pos] == 'z' {
		sp.zPos = pos
		pos++
	}
	if pos < end && spec[pos] == '#' {
		sp.altPos = pos
		pos++
	}
	// The 0 flag (backwards compatibility): fill with '0'. CPython switches
	// to '=' alignment only for types that align right by default; a str
	// aligns left, so the alignment stays as given (default '<').
	if !fillSpecified && pos < end && spec[pos] == '0' {
		sp.fs.fill = '0'
		pos++
	}
	return pos
}

// scanTail scans [width][grouping][.precision][type] from pos; its errors
// are CPython's parse errors.
func (sp *specParts) scanTail(pos int) *Error {
	spec, end := sp.spec, len(sp.spec)
	sp.widthPos = pos
	w, next, consumed, ok := getInteger(spec, pos)
	if !ok {
		return tmplErr(sp.at(pos), "the width at offset %d has too many digits (the largest CPython accepts is 9223372036854775807, this engine 1048576); use a smaller width", sp.at(pos))
	}
	pos = next
	if consumed > 0 {
		sp.fs.width = w
	}
	pos, err := sp.scanGrouping(pos)
	if err != nil {
		return err
	}
	if pos < end && spec[pos] == '.' {
		if pos, err = sp.scanPrecision(pos); err != nil {
			return err
		}
	}
	if pos < end {
		r, w := utf8.DecodeRuneInString(spec[pos:])
		if pos+w < end {
			return tmplErr(sp.at(pos), "invalid format spec %s: unexpected %s at offset %d; the form is [[fill]align][0][width][.precision][s]", quoteRunes(spec), quoteRunes(spec[pos:]), sp.at(pos))
		}
		sp.typ, sp.typePos = r, pos
	}
	return nil
}

// scanGrouping scans a ',' or '_' grouping option at pos.
func (sp *specParts) scanGrouping(pos int) (int, *Error) {
	spec, end := sp.spec, len(sp.spec)
	if pos < end && spec[pos] == ',' {
		sp.group, sp.groupPos = ',', pos
		pos++
	}
	if pos < end && spec[pos] == '_' {
		if sp.group != 0 {
			return 0, tmplErr(sp.at(pos), "both ',' and '_' at offset %d; a text field takes no grouping option, remove them", sp.at(pos))
		}
		sp.group, sp.groupPos = '_', pos
		pos++
	}
	if pos < end && spec[pos] == ',' && sp.group == '_' {
		return 0, tmplErr(sp.at(pos), "both ',' and '_' at offset %d; a text field takes no grouping option, remove them", sp.at(pos))
	}
	return pos, nil
}

// scanPrecision scans '.' and the precision at dot.
func (sp *specParts) scanPrecision(dot int) (int, *Error) {
	pos := dot + 1
	p, next, consumed, ok := getInteger(sp.spec, pos)
	if !ok {
		return 0, tmplErr(sp.at(pos), "the precision at offset %d has too many digits (the largest is 9223372036854775807); use a smaller precision", sp.at(pos))
	}
	if consumed == 0 {
		return 0, tmplErr(sp.at(dot), "'.' at offset %d is not followed by a precision; write the number of code points to keep, as in {observation:.100}, or remove the '.'", sp.at(dot))
	}
	sp.fs.prec = p
	return next, nil
}

// check refuses what a str does not take, in CPython's order, and the
// widths this engine does not take.
func (sp *specParts) check() (fieldSpec, *Error, gapClass) {
	fs, at := sp.fs, sp.at
	switch {
	case sp.group != 0:
		// CPython allows ',' and '_' only with numeric types (all of which
		// a str then refuses); with 's' it raises "Cannot specify ...".
		return fs, tmplErr(at(sp.groupPos), "grouping option %s at offset %d is not allowed for text; remove it", quoteRune(rune(sp.group)), at(sp.groupPos)), gapNone
	case sp.typ != 's':
		return fs, tmplErr(at(sp.typePos), "format type %s at offset %d is not allowed for text; use 's' or no type", quoteRune(sp.typ), at(sp.typePos)), gapNone
	case sp.signPos >= 0:
		return fs, tmplErr(at(sp.signPos), "sign %s at offset %d is not allowed for text; remove it", quoteRune(rune(sp.spec[sp.signPos])), at(sp.signPos)), gapNone
	case sp.zPos >= 0:
		return fs, tmplErr(at(sp.zPos), "'z' (negative zero coercion) at offset %d is not allowed for text; remove it", at(sp.zPos)), gapNone
	case sp.altPos >= 0:
		return fs, tmplErr(at(sp.altPos), "'#' (alternate form) at offset %d is not allowed for text; remove it", at(sp.altPos)), gapNone
	case sp.align == '=':
		return fs, tmplErr(at(sp.alignPos), "'=' alignment at offset %d is not allowed for text; use '<', '>' or '^'", at(sp.alignPos)), gapNone
	case fs.width > maxFieldWidth:
		// GAP: CPython accepts any width up to 2**63-1 and allocates the
		// padding (or raises MemoryError); this engine refuses widths above
		// 1,048,576 so that a template can never make a host allocate
		// gigabytes per step.
		return fs, tmplErr(at(sp.widthPos), gapPrefix+"width %d at offset %d is above the maximum %d; use a width of at most %d", fs.width, at(sp.widthPos), maxFieldWidth, maxFieldWidth), gapWidth
	}
	fs.align = sp.align
	return fs, nil, gapNone
}

// quoteRune quotes one code point for a message, e.g. 'd' or '\x00'.
func quoteRune(r rune) string { return strconv.QuoteRune(r) }

// quoteRunes quotes text for a message: its first jsonstr.ExcerptChars
// code points, then "…" when longer (docs/SPEC.md §6).
func quoteRunes(s string) string { return strconv.Quote(jsonstr.Excerpt(s)) }
