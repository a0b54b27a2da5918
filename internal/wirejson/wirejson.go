// Package wirejson converts between JSON and the msgpack wire format for the
// command-line tool, without judging the content: a JSON request becomes the
// msgpack request that says exactly the same thing, so the core's strict
// decoder gives JSON input the same codes and paths as msgpack input. A
// repeated key stays repeated (duplicate_key), a lone-surrogate escape or raw
// invalid UTF-8 becomes invalid UTF-8 inside a str (invalid_utf8), a number
// with a fraction or exponent becomes a float (malformed_request).
//
// Only JSON syntax errors are judged here.
package wirejson

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tinylib/msgp/msgp"
)

// SyntaxError is a JSON syntax error at a byte offset of the input.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return "invalid JSON at byte " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

const maxDepth = 10000

// ToMsgpack converts one JSON value (surrounding white space allowed) to
// msgpack, appending to dst.
func ToMsgpack(dst, src []byte) ([]byte, error) {
	p := parser{src: src, out: dst}
	p.ws()
	if err := p.value(0); err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.src) {
		return nil, p.fail("unexpected data after the JSON value")
	}
	return p.out, nil
}

type parser struct {
	src []byte
	i   int
	out []byte
}

func (p *parser) fail(msg string) error { return &SyntaxError{Offset: p.i, Msg: msg} }

func (p *parser) ws() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) error {
	if depth > maxDepth {
		return p.fail("nested deeper than 10000 levels")
	}
	if p.i >= len(p.src) {
		return p.fail("unexpected end of input, expected a value")
	}
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case p.lit("true"):
		p.out = msgp.AppendBool(p.out, true)
	case p.lit("false"):
		p.out = msgp.AppendBool(p.out, false)
	case p.lit("null"):
		p.out = msgp.AppendNil(p.out)
	default:
		return p.fail("unexpected character " + strconv.QuoteRune(rune(c)))
	}
	return nil
}

func (p *parser) lit(s string) bool {
	if len(p.src)-p.i >= len(s) && string(p.src[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// container parses the members of an object or array; the msgpack header,
// whose count is known only at the end, is patched in afterwards.
func (p *parser) container(depth int, open, close byte, member func() error) (int, []byte, error) {
	p.i++ // open
	start := len(p.out)
	n := 0
	p.ws()
	if p.i < len(p.src) && p.src[p.i] == close {
		p.i++
		return 0, nil, nil
	}
	for {
		p.ws()
		if err := member(); err != nil {
			return 0, nil, err
		}
		n++
		p.ws()
		if p.i >= len(p.src) {
			return 0, nil, p.fail("unexpected end of input, expected ',' or '" + string(close) + "'")
		}
		if p.src[p.i] == ',' {
			p.i++
			continue
		}
		if p.src[p.i] == close {
			p.i++
			body := append([]byte(nil), p.out[start:]...)
			p.out = p.out[:start]
			return n, body, nil
		}
		return 0, nil, p.fail("expected ',' or '" + string(close) + "'")
	}
}

func (p *parser) object(depth int) error {
	n, body, err := p.container(depth, '{', '}', func() error {
		if p.i >= len(p.src) || p.src[p.i] != '"' {
			return p.fail("expected a string key")
		}
		if err := p.str(); err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return p.fail("expected ':' after an object key")
		}
		p.i++
		p.ws()
		return p.value(depth + 1)
	})
	if err != nil {
		return err
	}
	p.out = msgp.AppendMapHeader(p.out, uint32(n))
	p.out = append(p.out, body...)
	return nil
}

func (p *parser) array(depth int) error {
	n, body, err := p.container(depth, '[', ']', func() error { return p.value(depth + 1) })
	if err != nil {
		return err
	}
	p.out = msgp.AppendArrayHeader(p.out, uint32(n))
	p.out = append(p.out, body...)
	return nil
}

// str parses a JSON string into a msgpack str. Raw bytes are kept as they are
// (invalid UTF-8 included); a \u escape of a lone surrogate becomes its
// three-byte generalized UTF-8 form, which no UTF-8 decoder accepts.
func (p *parser) str() error {
	p.i++ // opening quote
	var buf []byte
	for {
		if p.i >= len(p.src) {
			return p.fail("unterminated string")
		}
		c := p.src[p.i]
		switch {
		case c == '"':
			p.i++
			p.out = msgp.AppendStringFromBytes(p.out, buf)
			return nil
		case c < 0x20:
			return p.fail("control character in a string; escape it")
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.src) {
			return p.fail("unterminated escape")
		}
		e := p.src[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return p.fail("\\u must be followed by four hex digits")
			}
			if utf16.IsSurrogate(r) && r < 0xdc00 && p.i+1 < len(p.src) && p.src[p.i] == '\\' && p.src[p.i+1] == 'u' {
				save := p.i
				p.i += 2
				if r2, ok := p.hex4(); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
					buf = utf8.AppendRune(buf, utf16.DecodeRune(r, r2))
					continue
				}
				p.i = save
			}
			if utf16.IsSurrogate(r) {
				buf = append(buf, 0xe0|byte(r>>12), 0x80|byte(r>>6)&0x3f, 0x80|byte(r)&0x3f)
			} else {
				buf = utf8.AppendRune(buf, r)
			}
		default:
			return p.fail("invalid escape \\" + string(rune(e)))
		}
	}
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.src) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.src[p.i:p.i+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}

func (p *parser) number() error {
	start := p.i
	if p.src[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		s := p.i
		for p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '9' {
			p.i++
		}
		return p.i - s
	}
	intStart := p.i
	if digits() == 0 {
		return p.fail("expected a digit")
	}
	if p.src[intStart] == '0' && p.i-intStart > 1 {
		return p.fail("leading zeros are not allowed in JSON numbers")
	}
	isInt := true
	if p.i < len(p.src) && p.src[p.i] == '.' {
		p.i++
		isInt = false
		if digits() == 0 {
			return p.fail("expected a digit after '.'")
		}
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		p.i++
		isInt = false
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return p.fail("expected a digit in the exponent")
		}
	}
	text := string(p.src[start:p.i])
	if isInt {
		if v, err := strconv.ParseInt(text, 10, 64); err == nil {
			p.out = msgp.AppendInt64(p.out, v)
			return nil
		}
		if v, err := strconv.ParseUint(text, 10, 64); err == nil {
			p.out = msgp.AppendUint64(p.out, v)
			return nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return p.fail("bad number")
	}
	if math.IsInf(f, 0) {
		f = math.Copysign(math.MaxFloat64, f)
	}
	p.out = msgp.AppendFloat64(p.out, f)
	return nil
}
