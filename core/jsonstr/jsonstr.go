// Package jsonstr quotes text as a JSON string the way Python's
// json.dumps(s, ensure_ascii=False) does: `"`, `\` and the C0 controls are
// escaped (\b \f \n \r \t, else \u00xx in lowercase hex); everything else,
// non-ASCII and U+2028/U+2029 included, is written as it is. The core uses it
// for channel names in error paths, the command-line tool for its JSON output.
package jsonstr

// Append appends s, quoted, to dst.
func Append(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
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
