package core

import (
	"strconv"
	"strings"

	"github.com/polyloop/assembly/core/jsonstr"
	"github.com/polyloop/assembly/core/msgp"
)

// The wire form of the comparison (docs/SPEC.md §7.9): a msgpack request
// {a, b} in, a JSON text answer out.

// AppendCompareBytes is the module's compare export: it reads a compare
// request (a msgpack map with exactly the keys a and b, each a request map,
// a recorded message array, or either as JSON text in a str, which
// fromJSON converts to msgpack) and appends the JSON answer to dst
// (Comparison.AppendJSON, or AppendCompareError).
func AppendCompareBytes(dst, request []byte, fromJSON func(text []byte) ([]byte, *Error)) []byte {
	return appendJSONCall(dst, request, "the comparison", func() ([]byte, *Error) {
		a, b, err := splitCompareRequest(request, fromJSON)
		if err != nil {
			err.Path = trimDot(err.Path) // a path of the arguments, as of a request (docs/SPEC.md §2.2)
			return nil, err
		}
		c, err := Compare(a, b)
		if err != nil {
			return nil, err
		}
		return c.AppendJSON(dst), nil
	})
}

// appendJSONCall is the discipline of the calls that answer JSON
// (compare, cache_report): a request over the limit is too_large,
// an error is {"error": …} (AppendCompareError), and a panic of what (the
// comparison, …) is an internal error asking for the request.
func appendJSONCall(dst, request []byte, what string, answer func() ([]byte, *Error)) []byte {
	return appendArgsCall(dst, request, what, AppendCompareError, answer)
}

// appendArgsCall is appendJSONCall with the errors written by fail.
func appendArgsCall(dst, request []byte, what string, fail func([]byte, *Error) []byte, answer func() ([]byte, *Error)) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			out = fail(dst, newError(CodeInternal, "", what+" panicked; please report this request: "+panicText(r)))
		}
	}()
	if err := checkRequestSize(len(request)); err != nil {
		return fail(dst, err)
	}
	out, err := answer()
	if err != nil {
		return fail(dst, err)
	}
	return out
}

// splitCompareRequest returns the msgpack of the request's two sides.
func splitCompareRequest(b []byte, fromJSON func([]byte) ([]byte, *Error)) (sa, sb []byte, _ *Error) {
	if len(b) == 0 || msgp.NextType(b) != msgp.MapType {
		return nil, nil, wrongType(b, "a compare request (a map with the keys a and b)")
	}
	n, b, err := readMapHeader(b)
	if err != nil {
		return nil, nil, err
	}
	var sides [2][]byte
	var seen [2]bool
	for range n {
		var key string
		if key, b, err = readKey(b); err != nil {
			return nil, nil, err
		}
		if key != "a" && key != "b" {
			return nil, nil, unknownField(key, "a compare request", "a, b")
		}
		k := int(key[0] - 'a')
		if seen[k] {
			return nil, nil, duplicateKey(key)
		}
		seen[k] = true
		if sides[k], b, err = compareSideBytes(b, fromJSON); err != nil {
			return nil, nil, sideError(err, k)
		}
	}
	for k, ok := range seen {
		if !ok {
			return nil, nil, missingField("ab"[k:k+1], "a compare request")
		}
	}
	if len(b) != 0 {
		return nil, nil, newError(CodeMalformedRequest, "", "bytes follow the compare request; send one map")
	}
	return sides[0], sides[1], nil
}

// compareSideBytes cuts one side's value off b: its msgpack, the msgpack
// of its JSON text, or the msgpack a bin holds (a host's bytes, judged on
// their own: empty, or more than one value, is said as such).
func compareSideBytes(b []byte, fromJSON func([]byte) ([]byte, *Error)) (side, rest []byte, _ *Error) {
	switch {
	case len(b) > 0 && msgp.NextType(b) == msgp.StrType:
		text, rest, err := readStr(b)
		if err != nil {
			return nil, rest, err
		}
		if strings.Trim(text, " \t\r\n") == "" {
			return nil, rest, emptySide(len(text))
		}
		side, err = fromJSON([]byte(text))
		return side, rest, err
	case len(b) > 0 && msgp.NextType(b) == msgp.BinType:
		data, rest, e := msgp.ReadBytesZC(b)
		if e != nil {
			return nil, b, endsEarly()
		}
		if len(data) == 0 {
			return nil, rest, emptySide(0)
		}
		if msgp.NextType(data) == msgp.BinType {
			return nil, rest, newError(CodeMalformedRequest, "", "this side's bytes hold bytes (a bin in a bin); give the request or message list itself")
		}
		if c := data[0]; c < 0x80 || c > 0xbf && (c < 0xd9 || c > 0xdf) {
			// Not a msgpack map, array or str (JSON text), which every
			// side is, nor a byte JSON text can start with in UTF-8: the
			// bytes are JSON text, judged as the command-line tool judges
			// a file (a BOM or stray bytes included).
			if strings.Trim(string(data), " \t\r\n") == "" {
				return nil, rest, emptySide(len(data))
			}
			side, err := fromJSON(data)
			return side, rest, err
		}
		after, e := msgp.Skip(data)
		if e != nil {
			return nil, rest, newError(CodeMalformedRequest, "", "this side's msgpack ends in the middle of a value; it was cut short")
		}
		if len(after) != 0 {
			msg := "this side's bytes go on past its msgpack value (which ends at byte " + strconv.Itoa(len(data)-len(after)) + " of " + strconv.Itoa(len(data)) + "); give one request or message list per side"
			return nil, rest, newError(CodeMalformedRequest, "", msg)
		}
		// The value the bytes hold is judged as a side given directly (JSON
		// text in a str included).
		side, _, err := compareSideBytes(data, fromJSON)
		return side, rest, err
	}
	rest, e := msgp.Skip(b)
	if e != nil {
		return nil, b, unskippedError(b)
	}
	return b[:len(b)-len(rest)], rest, nil
}

// unskippedError is the error of a side whose msgpack cannot be skipped
// (cut short, or the byte 0xc1 inside it): a request's or a prompt form's
// is the error it gets on its own, at the path of the value being read
// (docs/SPEC.md §2.1, §7.9), so that a side's 0xc1 is not said to be the
// end of the request and its path is the value's, not the side's.
func unskippedError(b []byte) *Error {
	if len(b) > 0 && msgp.NextType(b) == msgp.MapType {
		plan := planPrefix
		if isPromptForm(b) {
			plan = planPromptForm
		}
		sc := getScratch()
		_, _, err := plan(b, sc)
		sc.release()
		if err != nil {
			return err
		}
	}
	if len(b) > 0 && b[0] == 0xc1 {
		return wrongType(b, "a request ("+w().Map+")")
	}
	return endsEarly()
}

// emptySide is the error of a side of n bytes that holds no value: none, or
// only JSON white space.
func emptySide(n int) *Error {
	what := "0 bytes"
	if n > 0 {
		what = "only white space"
	}
	return newError(CodeMalformedRequest, "", "this side is empty ("+what+"): give a request (a map) or a recorded message list (an array), as JSON text or msgpack bytes")
}

// AppendCompareError appends the answer of a compare request that fails
// with e: {"error": {code, message, path}} (and offset for an
// invalid_template error), the keys of a wire error (docs/SPEC.md §6).
func AppendCompareError(dst []byte, e *Error) []byte {
	dst = jsonstr.Append(append(dst, `{"error":{"code":`...), string(e.Code))
	dst = jsonstr.Append(append(dst, `,"message":`...), e.Message)
	dst = jsonstr.Append(append(dst, `,"path":`...), e.Path)
	if e.Offset >= 0 {
		dst = appendJSONInt(append(dst, `,"offset":`...), int64(e.Offset))
	}
	return append(dst, "}}"...)
}

// AppendJSON appends c as the JSON answer of the compare export, keys in
// the order docs/SPEC.md §7.9 lists them.
func (c *Comparison) AppendJSON(dst []byte) []byte {
	dst = strconv.AppendBool(append(dst, `{"identical":`...), c.Identical)
	dst = c.A.appendJSON(append(dst, `,"a":`...))
	dst = c.B.appendJSON(append(dst, `,"b":`...))
	dst = append(dst, `,"first_difference":`...)
	if d := c.First; d == nil {
		dst = append(dst, "null"...)
	} else {
		dst = d.appendJSON(dst)
	}
	dst = append(dst, `,"prefix_digests":{`...)
	for k, name := range [3]string{"run", "injections", "goal"} {
		dst = append(append(comma(dst, k), `"`+name+`":`...), jsonBool(c.Digests[k])...)
	}
	dst = appendJSONInt(append(dst, `},"cacheable_prefix_chars":`...), c.CacheablePrefixChars)
	return append(dst, '}')
}

func (s CompareSide) appendJSON(dst []byte) []byte {
	dst = jsonstr.Append(append(dst, `{"kind":`...), s.Kind)
	dst = appendJSONInt(append(dst, `,"messages":`...), int64(s.Messages))
	dst = appendJSONInt(append(dst, `,"prompt_chars":`...), s.PromptChars)
	return append(dst, '}')
}

func (d *Difference) appendJSON(dst []byte) []byte {
	dst = appendJSONInt(append(dst, `{"message":`...), int64(d.Message))
	dst = appendJSONInt(append(dst, `,"char":`...), int64(d.Char))
	dst = jsonstr.Append(append(dst, `,"kind":`...), d.Kind)
	dst = jsonOptStr(append(dst, `,"segment":`...), d.Segment, d.Segment != "")
	dst = append(dst, `,"step":`...)
	if d.Step < 0 {
		dst = append(dst, "null"...)
	} else {
		dst = appendJSONInt(dst, int64(d.Step))
	}
	dst = jsonOptStr(append(dst, `,"role_a":`...), d.RoleA, d.HasA)
	dst = jsonOptStr(append(dst, `,"role_b":`...), d.RoleB, d.HasB)
	dst = jsonstr.Append(append(dst, `,"excerpt_before":`...), d.Before)
	dst = jsonOptStr(append(dst, `,"excerpt_a":`...), d.A, d.HasA)
	dst = jsonOptStr(append(dst, `,"excerpt_b":`...), d.B, d.HasB)
	return append(dst, '}')
}

func jsonOptStr(dst []byte, s string, ok bool) []byte {
	if !ok {
		return append(dst, "null"...)
	}
	return jsonstr.Append(dst, s)
}

func jsonBool(b *bool) string {
	if b == nil {
		return "null"
	}
	return strconv.FormatBool(*b)
}
