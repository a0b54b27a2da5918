package core

import (
	"strconv"

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
