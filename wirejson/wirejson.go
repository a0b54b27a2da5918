// Package wirejson converts between JSON and the msgpack wire format for the
// command-line tool, without judging the content: a JSON request becomes the
// msgpack request that says exactly the same thing, so the core's strict
// decoder gives JSON input the same codes and paths as msgpack input. A
// repeated key stays repeated (duplicate_key), a lone-surrogate escape or raw
// invalid UTF-8 becomes invalid UTF-8 inside a str (invalid_utf8), a number
// with a fraction or exponent becomes a float64 (malformed_request where an
// int belongs), and an integer the wire cannot carry (outside -2^63 ..
// 2^64-1) ext 3 holding its text (an int beyond 64 bits, the core says).
//
// Only JSON syntax errors are judged here. Nesting depth is not, and it
// costs little: the reader keeps its own stack (no recursion), writes the
// first fullDepth (64) levels as they are, and reads a value that opens
// deeper with two bits per level (deep.go), writing in its place a stand-in
// of its type: empty, or as long as the value's msgpack when the request
// would be over the core's size limit. The core reads a request five levels
// deep at most and judges the rest by its size, so the stand-in gets the
// verdict the value itself would: JSON nested a million levels deep is
// reported where the same msgpack is (the first value that is not what the
// schema wants, e.g. steps[0] for {"steps": [[[...]]]}), and a syntax error
// anywhere in it is found. Time is linear in the text; memory is the
// msgpack and at most half a byte per byte of text for the deep levels.
package wirejson

import (
	"cmp"
	"encoding/binary"
	"errors"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/polyloop/assembly/core/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
)

// ErrTextTooLarge is ToMsgpack's answer to a text over 4 GiB − 1 bytes, more
// than msgpack's 32-bit lengths can count; Request answers it too_large, as
// every binding does (docs/SPEC.md §4).
var ErrTextTooLarge = errors.New("the JSON text is over 4 GiB - 1 bytes")

// maxTextBytes is the longest text ToMsgpack reads: msgpack's longest length
// (tests lower it).
var maxTextBytes = core.MaxMsgpackLength

// SyntaxError is a JSON syntax error at a byte offset of the input.
type SyntaxError struct {
	Offset int
	Msg    string
	// Said: Msg already says what to do (no general advice is added).
	Said bool
}

func (e *SyntaxError) Error() string {
	return "invalid JSON at byte " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// maxDepth bounds FromMsgpack's recursion (responses are at most five levels
// deep); the JSON reader has no depth limit (see fullDepth).
const maxDepth = 10000

// ToMsgpack converts one JSON value (surrounding white space allowed) to
// msgpack, appending to dst.
//
// It reads the text once, writing each value as it is read. A msgpack
// header's size depends on a count or length known only at the value's end,
// so every string and container gets a one-byte header, patched when it ends
// (a fixstr of fewer than 32 bytes, a fixmap or fixarray of fewer than 16
// members: almost every value). The few that need a longer header are noted,
// and one sweep at the end moves the bytes after each of them up to make room
// (each byte moved at most once). The output is the shortest form either
// way.
//
// A value that opens deeper than fullDepth (core.MaxValueDepth + 8) levels
// is written as a stand-in (deep.go): the msgpack says the text exactly to
// that depth, and the core, which reads no deeper, gives it the text's
// verdict. (A text
// whose msgpack would be over the core's size limit is read a second time,
// each stand-in then written at its value's size.)
//
// A text over 4 GiB − 1 bytes is ErrTextTooLarge, unread.
func ToMsgpack(dst, src []byte) ([]byte, error) {
	if len(src) > maxTextBytes {
		// Every count and length then fits the msgpack headers' 32 bits
		// (and the wire's limit is 1 GiB anyway).
		return nil, ErrTextTooLarge
	}
	// The msgpack is rarely longer than the text (quotes and white space
	// go; only short floats grow): room for it, and for the longer headers
	// (restRoom), but at most firstRoom at first: deep text writes nothing.
	p := parser{src: src, out: room(dst, min(restRoom(len(src)), firstRoom))}
	if err := p.run(); err != nil {
		return nil, err
	}
	out := p.widen()
	if full := uint64(len(out)-len(dst)) + p.saved; p.saved > 0 && core.RequestOverLimit(full) {
		// Too large with its deep values as they are: written at that
		// size (see fullDepth), so the core answers too_large for it.
		p = parser{src: src, out: room(dst, int(full)), pad: true}
		if err := p.run(); err != nil {
			return nil, err
		}
		out = p.widen()
	}
	return out, nil
}

// firstRoom is the most room ToMsgpack makes for the msgpack before it
// has written any: the rest comes once the msgpack needs it (run), so a
// text that is mostly deep values (deep.go), which write nothing, costs
// no room of its size.
const firstRoom = 64 << 20

// restRoom is the room for the msgpack of n bytes of text.
func restRoom(n int) int { return n + n/8 + 16 }

// room returns dst with room for n more bytes: dst itself, or a copy in a
// new buffer that is not written beyond it (not slices.Grow, which clears
// the room: a text's msgpack is often much shorter than the room kept for
// it, and pages never written are never resident).
func room(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	b := make([]byte, len(dst), len(dst)+n)
	copy(b, dst)
	return b
}

type parser struct {
	src   []byte
	i     int
	out   []byte
	stack []frame // the open containers, innermost last, fullDepth at most
	deep  skimmer // the containers open past fullDepth
	pad   bool    // write each stand-in at its value's size (appendStandIn)
	saved uint64  // the bytes the stand-ins save
	// strs holds every string of 32 bytes or more, in order; boxes every
	// container of 16 or more members, in the order they close. Each has a
	// one-byte header in out that widen replaces.
	strs, boxes []wide
}

// wide is a value whose header is longer than the byte reserved for it.
type wide struct {
	at  int    // the reserved header byte in out
	n   uint32 // length or member count
	tag byte   // 0xa0 str, 0x80 map, 0x90 array
}

type frame struct {
	obj bool
	n   uint32 // members so far
	hdr int    // offset of the reserved header byte
}

func (p *parser) fail(msg string) error { return &SyntaxError{Offset: p.i, Msg: msg} }

// controlNames names the control characters JSON has a short escape for.
var controlNames = map[byte][2]string{
	'\b': {"backspace", `\b`}, '\t': {"tab", `\t`}, '\n': {"line feed", `\n`}, '\f': {"form feed", `\f`}, '\r': {"carriage return", `\r`},
}

// controlMessage says which raw control character a string holds and how
// JSON writes it: "control character U+0009 (tab) in a string: JSON text
// cannot hold it raw; write it as \t".
func controlMessage(c byte) string {
	const hex = "0123456789ABCDEF"
	code := "U+00" + string([]byte{hex[c>>4], hex[c&15]})
	name, esc := "", `\u00`+string([]byte{hex[c>>4], hex[c&15]})
	if n, ok := controlNames[c]; ok {
		name, esc = " ("+n[0]+")", n[1]
	}
	return "control character " + code + name + " in a string: JSON text cannot hold it raw; write it as " + esc
}

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
			return p.fail(msgNoValue)
		}
		if rest := restRoom(len(p.src) - p.i); cap(p.out)-len(p.out) < min(rest, 1<<20) {
			p.out = room(p.out, rest) // past firstRoom: room for the rest, once
		}
		switch c := p.src[p.i]; {
		case c == '"':
			if err := p.str(); err != nil {
				return err
			}
		case c == '{' || c == '[':
			if len(p.stack) == fullDepth {
				if err := p.deepValue(); err != nil {
					return err
				}
				break
			}
			p.i++
			p.stack = append(p.stack, frame{obj: c == '{', hdr: len(p.out)})
			p.out = append(p.out, 0)
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
		case c == '-' || c >= '0' && c <= '9':
			if err := p.number(); err != nil {
				return err
			}
		default: // true, false, null, or not a value (atom, which skim shares)
			if err := p.atom(c); err != nil {
				return err
			}
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
			if p.i < len(p.src) && p.src[p.i] == close {
				p.i++
				p.close()
				continue
			}
			if p.i >= len(p.src) || p.src[p.i] != ',' {
				return p.failSeparator(close)
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

// msgNoValue is the syntax error where a value should start and the text ends.
const msgNoValue = "unexpected end of input, expected a value"

// atom reads the number, true, false or null that starts with c at p.i
// (anything else is a syntax error there).
func (p *parser) atom(c byte) error {
	switch {
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case p.lit("true"):
		p.out = append(p.out, 0xc3)
	case p.lit("false"):
		p.out = append(p.out, 0xc2)
	case p.lit("null"):
		p.out = append(p.out, 0xc0)
	default:
		return p.fail("unexpected " + p.charAt())
	}
	return nil
}

// failSeparator is the syntax error where a container's members go on or it
// closes (with close), and the text ends or has anything else.
func (p *parser) failSeparator(close byte) error {
	if p.i >= len(p.src) {
		return p.fail("unexpected end of input, expected ',' or '" + string(close) + "'")
	}
	return p.fail("expected ',' or '" + string(close) + "'")
}

// close ends the innermost container (its closing bracket is read).
func (p *parser) close() {
	f := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	tag := byte(0x90)
	if f.obj {
		tag = 0x80
	}
	if f.n < 16 {
		p.out[f.hdr] = tag | byte(f.n)
		return
	}
	p.boxes = append(p.boxes, wide{at: f.hdr, n: f.n, tag: tag})
}

// widen gives every wide value its header: the bytes after each reserved
// byte move up by the header bytes added before them, the last first, so
// that each byte moves once, within out when it has room.
func (p *parser) widen() []byte {
	if len(p.strs)+len(p.boxes) == 0 {
		return p.out
	}
	// Containers close inner first; strings are already in order.
	slices.SortFunc(p.boxes, func(a, b wide) int { return cmp.Compare(a.at, b.at) })
	extra := 0
	for _, w := range p.strs {
		extra += len(w.header(nil)) - 1
	}
	for _, w := range p.boxes {
		extra += len(w.header(nil)) - 1
	}
	src := p.out
	var dst []byte
	if extra <= cap(src)-len(src) {
		dst = src[:len(src)+extra]
	} else {
		first := len(src) // the first reserved byte: nothing before it moves
		if len(p.strs) > 0 {
			first = p.strs[0].at
		}
		if len(p.boxes) > 0 && p.boxes[0].at < first {
			first = p.boxes[0].at
		}
		dst = make([]byte, len(src)+extra, len(src)+extra+len(src)/8)
		copy(dst, src[:first])
	}
	end, s, b := len(src), len(p.strs)-1, len(p.boxes)-1
	var buf [5]byte
	for s >= 0 || b >= 0 {
		var w wide
		if b < 0 || s >= 0 && p.strs[s].at > p.boxes[b].at {
			w, s = p.strs[s], s-1
		} else {
			w, b = p.boxes[b], b-1
		}
		copy(dst[w.at+1+extra:], src[w.at+1:end])
		h := w.header(buf[:0])
		extra -= len(h) - 1
		copy(dst[w.at+extra:], h)
		end = w.at
	}
	return dst
}

// header appends w's msgpack header to b.
func (w wide) header(b []byte) []byte {
	switch w.tag {
	case 0x80:
		return msgp.AppendMapHeader(b, w.n)
	case 0x90:
		return msgp.AppendArrayHeader(b, w.n)
	}
	return appendStrHeader(b, int(w.n))
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

// str reads the JSON string at p.i (its opening quote) into a msgpack str.
// Raw bytes are kept as they are (invalid UTF-8 included); a \u escape of a
// lone surrogate becomes its three-byte generalized UTF-8 form, which no
// UTF-8 decoder accepts.
func (p *parser) str() error {
	hdr := len(p.out)
	out := append(p.out, 0xa0)
	src, i := p.src, p.i+1
	for {
		// a run of bytes that stand for themselves, copied at once
		j := plain(src, i)
		out = append(out, src[i:j]...)
		if j >= len(src) {
			p.i = j
			return p.fail("unterminated string")
		}
		c := src[j]
		if c == '"' {
			p.i, p.out = j+1, out
			if n := len(out) - hdr - 1; n < 32 {
				out[hdr] |= byte(n)
			} else {
				p.strs = append(p.strs, wide{at: hdr, n: uint32(n), tag: 0xa0})
			}
			return nil
		}
		if c < 0x20 {
			p.i = j
			return &SyntaxError{Offset: p.i, Msg: controlMessage(c), Said: true}
		}
		if j+1 >= len(src) {
			p.i = j
			return p.fail("unterminated escape")
		}
		i = j + 2
		switch e := src[j+1]; e {
		case 'n':
			out = append(out, '\n')
		case '"', '\\', '/':
			out = append(out, e)
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'u':
			p.i = i
			r, ok := p.hex4()
			if !ok {
				return p.fail("\\u must be followed by four hex digits")
			}
			if r >= 0xd800 && r < 0xdc00 && p.i+1 < len(src) && src[p.i] == '\\' && src[p.i+1] == 'u' {
				save := p.i
				p.i += 2
				if r2, ok := p.hex4(); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
					r = utf16.DecodeRune(r, r2)
				} else {
					p.i = save
				}
			}
			if utf16.IsSurrogate(r) {
				out = append(out, 0xe0|byte(r>>12), 0x80|byte(r>>6)&0x3f, 0x80|byte(r)&0x3f)
			} else {
				out = utf8.AppendRune(out, r)
			}
			i = p.i
		default:
			p.i = j + 1
			return p.fail("invalid escape \\" + string(rune(e)))
		}
	}
}

// plain returns the index of the first byte of src at or after i that is
// '"', '\\' or a control character, or len(src): eight bytes at a time.
func plain(src []byte, i int) int {
	for ; i+8 <= len(src); i += 8 {
		if m := special(binary.LittleEndian.Uint64(src[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(src); i++ {
		if c := src[i]; c == '"' || c == '\\' || c < 0x20 {
			break
		}
	}
	return i
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
		// An integer the wire cannot carry: ext 3 holding its text (an int beyond 64 bits).
		p.out = appendExt(p.out, abi.ExtBigInt, p.src[start:p.i])
		return nil
	}
	// A fraction or an exponent: a float64, correctly rounded (±Inf
	// beyond its range).
	f, _ := strconv.ParseFloat(text, 64)
	p.out = msgp.AppendFloat64(p.out, f)
	return nil
}

// appendExt appends the ext value of type typ holding data, in the shortest
// form msgp writes.
func appendExt(b []byte, typ int8, data []byte) []byte {
	switch n := len(data); {
	case n == 1 || n == 2 || n == 4 || n == 8 || n == 16:
		b = append(b, map[int]byte{1: 0xd4, 2: 0xd5, 4: 0xd6, 8: 0xd7, 16: 0xd8}[n], byte(typ))
	case n < 256:
		b = append(b, 0xc7, byte(n), byte(typ))
	case n < 65536:
		b = append(b, 0xc8, byte(n>>8), byte(n), byte(typ))
	default:
		b = append(b, 0xc9, byte(n>>24), byte(n>>16), byte(n>>8), byte(n), byte(typ))
	}
	return append(b, data...)
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

// special returns, for the word x read little-endian, a mask whose lowest
// set bit is the high bit of the first byte that is '"', '\\' or below 0x20
// (0 when there is none): the classic "has a zero byte" and "has a byte less
// than n" tests. Bits above the lowest may be false alarms (a borrow out of
// a flagged byte); only the lowest counts.
func special(x uint64) uint64 {
	hasZero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return hasZero(x^(ones*'"')) | hasZero(x^(ones*'\\')) | (x-ones*0x20)&^x&highs
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
