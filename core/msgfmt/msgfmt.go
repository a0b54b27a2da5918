// Package msgfmt formats the core's message texts: formats whose only verbs
// are %d (an integer), %s (a string) and %% (a percent sign), the verbs every
// host's formatter shares (docs/SPEC.md §6; core/abi). Sprintf gives the
// text fmt.Sprintf gives for such a format; the core uses it so that the
// WebAssembly module does not link fmt, and tools/genconsts uses Split to
// write the same formats as Python and JavaScript.
package msgfmt

import (
	"errors"
	"strconv"
)

// Split splits format at its verbs: the literal pieces (one more than the
// verbs, %% made %) and the verbs in order ('d' or 's'). Any other verb, or
// a lone % at the end, is an error.
func Split(format string) (pieces []string, verbs []byte, err error) {
	var piece []byte
	for i := 0; i < len(format); i++ {
		if c := format[i]; c != '%' {
			piece = append(piece, c)
			continue
		}
		if i++; i == len(format) {
			return nil, nil, errors.New("a lone % at the end")
		}
		switch c := format[i]; c {
		case '%':
			piece = append(piece, '%')
		case 'd', 's':
			pieces, verbs = append(pieces, string(piece)), append(verbs, c)
			piece = piece[:0]
		default:
			return nil, nil, errors.New("the verb %" + string(rune(c)) + " (only %d, %s and %% are allowed)")
		}
	}
	return append(pieces, string(piece)), verbs, nil
}

// Sprintf formats args by format, as fmt.Sprintf does: each %d takes an
// integer argument and each %s a string, in order; %% is a percent sign.
// A string for %d, an integer for %s, or a verb without an argument, is
// written as fmt marks it (%!d(string=…), %!s(int=…), %!d(MISSING)); other
// verbs and argument types are not supported (Split refuses such formats,
// and the core's tests check each of its formats).
func Sprintf(format string, args ...any) string {
	out := make([]byte, 0, len(format)+16*len(args))
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			out = append(out, c)
			continue
		}
		i++
		switch v := format[i]; v {
		case '%':
			out = append(out, '%')
		case 'd', 's':
			if len(args) == 0 {
				out = append(out, "%!"+string(rune(v))+"(MISSING)"...)
				continue
			}
			out = appendArg(out, v, args[0])
			args = args[1:]
		default:
			out = append(out, '%', v)
		}
	}
	return string(out)
}

// appendArg appends a as verb v ('d' or 's') formats it.
func appendArg(out []byte, v byte, a any) []byte {
	var n int64
	switch x := a.(type) {
	case string:
		if v == 's' {
			return append(out, x...)
		}
		return append(append(append(out, "%!d(string="...), x...), ')')
	case int:
		n = int64(x)
	case int64:
		n = x
	default:
		return append(out, "%!"+string(rune(v))+"(BADTYPE)"...)
	}
	if v == 'd' {
		return strconv.AppendInt(out, n, 10)
	}
	name := "%!s(int="
	if _, ok := a.(int64); ok {
		name = "%!s(int64="
	}
	return append(strconv.AppendInt(append(out, name...), n, 10), ')')
}
