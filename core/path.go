package core

import (
	"strconv"
	"unicode/utf8"

	"github.com/polyloop/assembly/core/jsonstr"
)

// Error paths (docs/SPEC.md §6): built only on failure, each level of the decoder
// prepending its own segment.

// within prepends a path segment to e's path and returns e.
func (e *Error) within(seg string) *Error {
	e.Path = seg + e.Path
	return e
}

func indexSeg(i int) string { return "[" + strconv.Itoa(i) + "]" }

func channelSeg(name string) string { return "[" + quote(name) + "]" }

// fieldSeg is the path segment of a map key: `.name` for identifiers, else
// `["name"]`.
func fieldSeg(key string) string {
	if isIdent(key) {
		return "." + key
	}
	return "[" + quote(key) + "]"
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// quote quotes a value or key for a message or a path as Python's
// json.dumps(s, ensure_ascii=False) does, cut to its first
// jsonstr.ExcerptChars code points and "…" when longer (docs/SPEC.md §6: an
// error response stays a few KB whatever the request holds).
func quote(s string) string { return jsonstr.QuoteExcerpt(s) }

// pathParts splits a path of this syntax into its map keys (string) and
// indexes (int), as an editor finds the value: "steps[3].observation" is
// steps, 3, observation; ["a b"][0] is "a b", 0. A key cut to an excerpt
// ("…") keeps its cut form. Nil for "" (the request itself).
func pathParts(p string) []any {
	var parts []any
	for i := 0; i < len(p); {
		switch {
		case p[i] == '.':
			i++
			fallthrough
		default:
			j := i
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			parts, i = append(parts, p[i:j]), j
		case p[i] == '[' && i+1 < len(p) && p[i+1] == '"':
			key, n := unquote(p[i+1:])
			parts, i = append(parts, key), i+1+n+1 // the quoted key and "]"
		case p[i] == '[':
			j := i + 1
			n := 0
			for j < len(p) && p[j] >= '0' && p[j] <= '9' {
				n = n*10 + int(p[j]-'0')
				j++
			}
			parts, i = append(parts, n), j+1
		}
	}
	return parts
}

// unquote reads the JSON string at the start of s (jsonstr's escapes) and
// returns its text and its length in s.
func unquote(s string) (string, int) {
	var b []byte
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return string(b), i + 1
		case '\\':
			i++
			if i >= len(s) {
				return string(b), i
			}
			switch e := s[i]; e {
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'u':
				if i+4 < len(s) {
					v, _ := strconv.ParseUint(s[i+1:i+5], 16, 16)
					b = utf8.AppendRune(b, rune(v))
					i += 4
				}
			default:
				b = append(b, e)
			}
		default:
			b = append(b, c)
		}
	}
	return string(b), len(s)
}
