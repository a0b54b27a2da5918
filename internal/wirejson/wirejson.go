// Package wirejson converts between JSON and the msgpack wire format for the
// command-line tool, without judging the content: a JSON request becomes the
// msgpack request that says exactly the same thing, so the core's strict
// decoder gives JSON input the same codes and paths as msgpack input. A
// repeated key stays repeated (duplicate_key), a lone-surrogate escape or raw
// invalid UTF-8 becomes invalid UTF-8 inside a str (invalid_utf8), a number
// with a fraction or exponent, or an integer the wire cannot carry (outside
// -2^63 .. 2^64-1), becomes a float64 (malformed_request where an int
// belongs).
//
// Only JSON syntax errors are judged here. Nesting depth is not: the reader
// keeps its own stack (no recursion), so JSON nested a million levels deep
// becomes msgpack nested as deep, and the core reports it where it reports
// the same msgpack (the first value that is not what the schema wants, e.g.
// steps[0] for {"steps": [[[...]]]}). Time and memory are linear in the text.
package wirejson

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"
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

// maxDepth bounds FromMsgpack's recursion (responses are at most five levels
// deep); the JSON reader has no depth limit.
const maxDepth = 10000

// ToMsgpack converts one JSON value (surrounding white space allowed) to
// msgpack, appending to dst.
//
// It reads the text twice. The first pass checks the syntax and records the
// member count of every object and array with 16 or more members and the
// length of every string of 32 bytes or more (a msgpack header's size depends
// on them); the second writes the msgpack, each byte once: a smaller
// container or string gets a one-byte header patched when it ends.
func ToMsgpack(dst, src []byte) ([]byte, error) {
	if len(src) > math.MaxUint32 {
		// Every count and length then fits the msgpack headers' 32 bits
		// (and the wire's limit is 1 GiB anyway).
		return nil, &SyntaxError{Offset: 0, Msg: "the text is over 4 GiB; a request is at most 1 GiB"}
	}
	p := parser{src: src}
	if err := p.run(); err != nil {
		return nil, err
	}
	// Containers close inner first; the second pass needs them in the
	// order they open.
	slices.SortFunc(p.big, func(a, b bigCount) int { return cmp.Compare(a.index, b.index) })
	p = parser{src: src, emit: true, out: dst, big: p.big, long: p.long, stack: p.stack[:0]}
	p.run()
	return p.out, nil
}

type parser struct {
	src  []byte
	i    int
	emit bool // second pass: write p.out
	out  []byte
	// big holds, in the order the containers open, the container index and
	// member count of every object or array with 16 or more members (first
	// pass: appended; second pass: consumed from the front).
	big    []bigCount
	opened uint32  // containers opened so far
	stack  []frame // the open containers, innermost last
	// long holds, in order, the index and decoded length of every string of
	// 32 bytes or more (a longer header than a fixstr's); strs counts the
	// strings read so far.
	long []bigCount
	strs uint32
}

type bigCount struct{ index, n uint32 }

type frame struct {
	obj   bool
	index uint32 // the how-manieth container opened
	n     uint32 // members so far
	hdr   int    // second pass: offset of a fixmap/fixarray header to patch, or -1
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

// run reads one JSON value and the white space around it. The loop reads a
// value, then closes every container that ends after it, then reads the
// separator and, in an object, the next key.
func (p *parser) run() error {
	p.ws()
	for {
		if p.i >= len(p.src) {
			return p.fail("unexpected end of input, expected a value")
		}
		switch c := p.src[p.i]; {
		case c == '{' || c == '[':
			p.i++
			p.open(c == '{')
			p.ws()
			if p.i < len(p.src) && p.src[p.i] == c+2 { // '}' or ']'
				p.i++
				p.close()
				break
			}
			if c == '{' {
				if err := p.key(); err != nil {
					return err
				}
			}
			continue // the first member's value
		case c == '"':
			if err := p.str(); err != nil {
				return err
			}
		case c == '-' || c >= '0' && c <= '9':
			if err := p.number(); err != nil {
				return err
			}
		case p.lit("true"):
			p.put(0xc3)
		case p.lit("false"):
			p.put(0xc2)
		case p.lit("null"):
			p.put(0xc0)
		default:
			return p.fail("unexpected " + p.charAt())
		}
		// After a value: close containers or read the next member.
		for {
			if len(p.stack) == 0 {
				p.ws()
				if p.i != len(p.src) {
					return p.fail("unexpected data after the JSON value")
				}
				return nil
			}
			top := &p.stack[len(p.stack)-1]
			top.n++
			close := byte(']')
			if top.obj {
				close = '}'
			}
			p.ws()
			if p.i >= len(p.src) {
				return p.fail("unexpected end of input, expected ',' or '" + string(close) + "'")
			}
			if p.src[p.i] == close {
				p.i++
				p.close()
				continue
			}
			if p.src[p.i] != ',' {
				return p.fail("expected ',' or '" + string(close) + "'")
			}
			p.i++
			p.ws()
			if top.obj {
				if err := p.key(); err != nil {
					return err
				}
			}
			break
		}
	}
}

func (p *parser) put(b byte) {
	if p.emit {
		p.out = append(p.out, b)
	}
}

// open starts a container: in the second pass its header is written now
// when its count is recorded, else reserved as one byte.
func (p *parser) open(obj bool) {
	f := frame{obj: obj, index: p.opened, hdr: -1}
	if p.emit {
		if len(p.big) > 0 && p.big[0].index == p.opened {
			if obj {
				p.out = msgp.AppendMapHeader(p.out, p.big[0].n)
			} else {
				p.out = msgp.AppendArrayHeader(p.out, p.big[0].n)
			}
			p.big = p.big[1:]
		} else {
			f.hdr = len(p.out)
			p.out = append(p.out, 0)
		}
	}
	p.stack = append(p.stack, f)
	p.opened++
}

// close ends the innermost container (its closing bracket is read).
func (p *parser) close() {
	f := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	switch {
	case !p.emit:
		if f.n >= 16 {
			p.big = append(p.big, bigCount{index: f.index, n: f.n})
		}
	case f.hdr >= 0:
		tag := byte(0x90)
		if f.obj {
			tag = 0x80
		}
		p.out[f.hdr] = tag | byte(f.n)
	}
}

// key reads an object key and the colon after it.
func (p *parser) key() error {
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
	return nil
}

func (p *parser) lit(s string) bool {
	if len(p.src)-p.i >= len(s) && string(p.src[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// str reads a JSON string into a msgpack str. Raw bytes are kept as they are
// (invalid UTF-8 included); a \u escape of a lone surrogate becomes its
// three-byte generalized UTF-8 form, which no UTF-8 decoder accepts. The
// first pass checks it and notes a long one's length; the second writes it.
func (p *parser) str() error {
	k := p.strs
	p.strs++
	if !p.emit {
		_, n, err := p.scanStr(nil, false)
		if n >= 32 {
			p.long = append(p.long, bigCount{index: k, n: uint32(n)})
		}
		return err
	}
	if len(p.long) > 0 && p.long[0].index == k {
		p.out = appendStrHeader(p.out, int(p.long[0].n))
		p.long = p.long[1:]
		p.out, _, _ = p.scanStr(p.out, true)
		return nil
	}
	hdr := len(p.out) // a fixstr: its length is patched in
	p.out = append(p.out, 0xa0)
	p.out, _, _ = p.scanStr(p.out, true)
	p.out[hdr] |= byte(len(p.out) - hdr - 1)
	return nil
}

// scanStr reads the string at p.i (its opening quote) and returns its decoded
// length and, when write is set, dst with the decoded bytes appended.
func (p *parser) scanStr(dst []byte, write bool) ([]byte, int, error) {
	p.i++ // opening quote
	n := 0
	for {
		// a run of bytes that stand for themselves: eight at a time while
		// none of them is '"', '\\' or a control character
		j := p.i
		for j+8 <= len(p.src) && !special(binary.LittleEndian.Uint64(p.src[j:])) {
			j += 8
		}
		for j < len(p.src) {
			c := p.src[j]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			j++
		}
		n += j - p.i
		if write {
			dst = append(dst, p.src[p.i:j]...)
		}
		p.i = j
		if p.i >= len(p.src) {
			return dst, 0, p.fail("unterminated string")
		}
		c := p.src[p.i]
		if c == '"' {
			p.i++
			return dst, n, nil
		}
		if c < 0x20 {
			return dst, 0, p.fail("control character in a string; escape it")
		}
		if p.i+1 >= len(p.src) {
			return dst, 0, p.fail("unterminated escape")
		}
		e := p.src[p.i+1]
		var one byte
		switch e {
		case '"', '\\', '/':
			one = e
		case 'b':
			one = '\b'
		case 'f':
			one = '\f'
		case 'n':
			one = '\n'
		case 'r':
			one = '\r'
		case 't':
			one = '\t'
		case 'u':
			p.i += 2
			r, ok := p.hex4()
			if !ok {
				return dst, 0, p.fail("\\u must be followed by four hex digits")
			}
			if r >= 0xd800 && r < 0xdc00 && p.i+1 < len(p.src) && p.src[p.i] == '\\' && p.src[p.i+1] == 'u' {
				save := p.i
				p.i += 2
				if r2, ok := p.hex4(); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
					r = utf16.DecodeRune(r, r2)
				} else {
					p.i = save
				}
			}
			var buf [4]byte
			var b []byte
			if utf16.IsSurrogate(r) {
				b = append(buf[:0], 0xe0|byte(r>>12), 0x80|byte(r>>6)&0x3f, 0x80|byte(r)&0x3f)
			} else {
				b = utf8.AppendRune(buf[:0], r)
			}
			n += len(b)
			if write {
				dst = append(dst, b...)
			}
			continue
		default:
			p.i++
			return dst, 0, p.fail("invalid escape \\" + string(rune(e)))
		}
		p.i += 2
		n++
		if write {
			dst = append(dst, one)
		}
	}
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.src) {
		return 0, false
	}
	var v rune
	for _, c := range p.src[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return v, true
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
		p.i = intStart + 1
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
	if !p.emit {
		return nil
	}
	text := string(p.src[start:p.i])
	if isInt {
		// canonical: the shortest form, unsigned for a non-negative value
		if v, err := strconv.ParseInt(text, 10, 64); err == nil && v < 0 {
			p.out = msgp.AppendInt64(p.out, v)
			return nil
		}
		if v, err := strconv.ParseUint(strings.TrimPrefix(text, "-"), 10, 64); err == nil && (v == 0 || text[0] != '-') {
			p.out = msgp.AppendUint64(p.out, v)
			return nil
		}
	}
	// A fraction, an exponent or an integer the wire cannot carry: a
	// float64, correctly rounded (±Inf beyond its range).
	f, _ := strconv.ParseFloat(text, 64)
	p.out = msgp.AppendFloat64(p.out, f)
	return nil
}

// appendStrHeader appends the shortest msgpack str header for n bytes.
func appendStrHeader(b []byte, n int) []byte {
	switch {
	case n < 32:
		return append(b, 0xa0|byte(n))
	case n < 1<<8:
		return append(b, 0xd9, byte(n))
	case n < 1<<16:
		return append(b, 0xda, byte(n>>8), byte(n))
	}
	return append(b, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

const ones, highs = 0x0101010101010101, 0x8080808080808080

// special reports whether any byte of the word x is '"', '\\' or below 0x20
// (the classic "has a zero byte" and "has a byte less than n" tests).
func special(x uint64) bool {
	hasZero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return hasZero(x^(ones*'"'))|hasZero(x^(ones*'\\'))|(x-ones*0x20)&^x&highs != 0
}

// charAt names the character at the read position, decoded as UTF-8 (a
// byte-order mark is character '\ufeff', not its first byte), or the byte
// when it starts no valid UTF-8.
func (p *parser) charAt() string {
	r, n := utf8.DecodeRune(p.src[p.i:])
	if r == utf8.RuneError && n <= 1 {
		return "byte 0x" + strconv.FormatUint(uint64(p.src[p.i]), 16)
	}
	return "character " + strconv.QuoteRuneToASCII(r)
}
