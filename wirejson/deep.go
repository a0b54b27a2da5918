package wirejson

import (
	"slices"

	"github.com/polyloop/assembly/core"
)

// fullDepth is the deepest a container ToMsgpack writes as it is: one that
// opens deeper (a member of a container at this depth) is read by skim,
// its syntax checked and its msgpack size counted, and written as a
// stand-in of its type: the empty array or map, or, when the request is
// over the core's size limit as the JSON says it (core.RequestOverLimit),
// one of its size (appendStandIn). The core reads a request five levels
// deep at most (the text of a content block of a message of run_messages
// is a value at depth 6, a compare side's recorded list is one level
// shallower) and a value at depth 6 only as far as its first byte; of the
// rest it counts only the bytes, for the limit. So any fullDepth of 6 or
// more gives a request the verdict of the msgpack the JSON says
// (docs/SPEC.md §2.3). But a value the core passes through, a field of an
// export's body (at depth 2 of the body's text, 4 of an export's), is
// read core.MaxValueDepth levels deep: written as it is past that depth,
// it gets the core's verdict (too deep) rather than losing its innermost
// values to a stand-in. Tests lower it.
var fullDepth = core.MaxValueDepth + 8

// deepValue reads the container at p.i, which opens past fullDepth, and
// writes its stand-in.
func (p *parser) deepValue() error {
	obj := p.src[p.i] == '{'
	size, err := p.skim()
	if err != nil {
		return err
	}
	if p.pad {
		p.out = appendStandIn(p.out, obj, size)
		return nil
	}
	p.saved += size - 1
	if obj {
		p.out = append(p.out, 0x80)
	} else {
		p.out = append(p.out, 0x90)
	}
	return nil
}

// skim reads the container at p.i as run reads a value, with the same
// syntax errors at the same offsets, and returns the size of the msgpack
// run would write for it. It keeps each open level in p.deep (two bits
// and its member count when that is not 0) and writes nothing: a string
// or number is written and measured, then cut off again.
func (p *parser) skim() (uint64, error) {
	s := &p.deep
	s.reset()
	for {
		if p.i >= len(p.src) {
			return 0, p.fail(msgNoValue)
		}
		mark, strs := len(p.out), len(p.strs)
		switch c := p.src[p.i]; c {
		case '{', '[':
			p.i++
			s.open(c == '{')
			p.ws()
			if p.i < len(p.src) && p.src[p.i] == c+2 { // '}' or ']'
				p.i++
				s.close()
				break
			}
			if c == '{' {
				if err := p.key(); err != nil {
					return 0, err
				}
				s.size += p.cut(mark, strs)
			}
			continue // the first member's value
		case '"':
			if err := p.str(); err != nil {
				return 0, err
			}
		default:
			if err := p.atom(c); err != nil {
				return 0, err
			}
		}
		s.size += p.cut(mark, strs)
		if done, err := p.skimAfter(); done || err != nil {
			return s.size, err
		}
	}
}

// skimAfter is run's loop after a value, for skim: it closes the levels
// that end after the value and reads the separator and, in an object, the
// next key. done is whether the container skim reads has ended. (run keeps
// its own loop inline, not a call per value: calls cost in Go's
// WebAssembly code.)
func (p *parser) skimAfter() (done bool, _ error) {
	s := &p.deep
	for s.depth > 0 {
		s.member()
		close := byte(']')
		if s.obj {
			close = '}'
		}
		p.ws()
		if p.i < len(p.src) && p.src[p.i] == close {
			p.i++
			s.close()
			continue
		}
		if p.i >= len(p.src) || p.src[p.i] != ',' {
			return false, p.failSeparator(close)
		}
		p.i++
		p.ws()
		if s.obj {
			mark, strs := len(p.out), len(p.strs)
			if err := p.key(); err != nil {
				return false, err
			}
			s.size += p.cut(mark, strs)
		}
		return false, nil
	}
	return true, nil
}

// cut removes what the reader wrote since mark (one string or number, whose
// strings since strs are the long one, if any) and returns the size it has
// in msgpack: its bytes, with a long string's whole header.
func (p *parser) cut(mark, strs int) uint64 {
	n := uint64(len(p.out) - mark)
	for _, w := range p.strs[strs:] {
		n += uint64(len(w.header(nil)) - 1)
	}
	p.out, p.strs = p.out[:mark], p.strs[:strs]
	return n
}

// skimmer holds the containers open past fullDepth: the innermost in obj
// and n, each outer one as two bits (obj, and whether its count is not 0)
// and, when it is not 0, its count as a varint. A level with a count of c
// has c members and commas before it in the text, so the varints take at
// most a third of a byte per byte of text and the bits a quarter (a text
// of '[' only).
type skimmer struct {
	bits   bitStack
	counts byteStack
	depth  int    // open levels
	obj    bool   // the innermost is an object
	n      uint32 // its members so far, counted to 1<<16 (the headers' sizes differ below it)
	size   uint64 // msgpack bytes of the values read, headers of the closed levels included
}

func (s *skimmer) reset() {
	s.bits.n, s.counts.n, s.depth, s.size = 0, 0, 0, 0
}

func (s *skimmer) open(obj bool) {
	if s.depth > 0 {
		s.bits.push(s.obj)
		s.bits.push(s.n != 0)
		if s.n != 0 {
			s.counts.pushVarint(s.n)
		}
	}
	s.depth++
	s.obj, s.n = obj, 0
}

// close ends the innermost level, counting its header.
func (s *skimmer) close() {
	s.size += containerHeaderSize(s.n)
	s.depth--
	if s.depth > 0 {
		s.n = 0
		if s.bits.pop() {
			s.n = s.counts.popVarint()
		}
		s.obj = s.bits.pop()
	}
}

// member counts a member of the innermost level.
func (s *skimmer) member() {
	if s.n < 1<<16 {
		s.n++
	}
}

// containerHeaderSize is the size of a msgpack map or array header of n
// entries (n counted to 1<<16).
func containerHeaderSize(n uint32) uint64 {
	switch {
	case n < 16:
		return 1
	case n < 1<<16:
		return 3
	}
	return 5
}

// The stacks keep their bits and bytes in chunks, so that a deep text's
// stack grows without copying (no garbage, nothing resident twice).
const chunkBytes = 32 << 10

// bitStack is a stack of bits.
type bitStack struct {
	chunks [][]uint64
	n      int // bits
}

func (b *bitStack) push(v bool) {
	const per = chunkBytes * 8
	c, i := b.n/per, b.n%per
	if c == len(b.chunks) {
		b.chunks = append(b.chunks, make([]uint64, chunkBytes/8))
	}
	w, bit := &b.chunks[c][i/64], uint64(1)<<(i%64)
	if v {
		*w |= bit
	} else {
		*w &^= bit
	}
	b.n++
}

func (b *bitStack) pop() bool {
	const per = chunkBytes * 8
	b.n--
	c, i := b.n/per, b.n%per
	return b.chunks[c][i/64]>>(i%64)&1 != 0
}

// byteStack is a stack of bytes.
type byteStack struct {
	chunks [][]byte
	n      int
}

func (b *byteStack) push(v byte) {
	c := b.n / chunkBytes
	if c == len(b.chunks) {
		b.chunks = append(b.chunks, make([]byte, chunkBytes))
	}
	b.chunks[c][b.n%chunkBytes] = v
	b.n++
}

func (b *byteStack) pop() byte {
	b.n--
	return b.chunks[b.n/chunkBytes][b.n%chunkBytes]
}

// pushVarint pushes v in 7-bit groups, the lowest first; every group but
// that one has its high bit set, so that popVarint, reading from the top,
// knows where v ends.
func (b *byteStack) pushVarint(v uint32) {
	b.push(byte(v & 0x7f))
	for v >>= 7; v != 0; v >>= 7 {
		b.push(byte(v&0x7f) | 0x80)
	}
}

func (b *byteStack) popVarint() uint32 {
	var v uint32
	for {
		c := b.pop()
		v = v<<7 | uint32(c&0x7f)
		if c&0x80 == 0 {
			return v
		}
	}
}

// maxBin is the most bytes a msgpack bin holds.
const maxBin = 1<<32 - 1

// appendStandIn appends the stand-in at its size of a container of size
// bytes of msgpack: the empty container (size 1), or the container of one
// member (an array's element, a map's "" key and value) that pads it to
// size bytes: nil, a bin of zero bytes, or more than one bin (appendPad).
// Nothing reads it (see fullDepth): only its type and size count.
func appendStandIn(b []byte, obj bool, size uint64) []byte {
	switch {
	case size == 1 && obj:
		return append(b, 0x80)
	case size == 1:
		return append(b, 0x90)
	case obj: // a member is at least a key and a value: size ≥ 3
		return appendPad(append(b, 0x81, 0xa0), size-2, maxBin)
	}
	return appendPad(append(b, 0x91), size-1, maxBin)
}

// appendPad appends one msgpack value of n ≥ 1 bytes: nil, a bin of at
// most most bytes, or, longer, an array of two: such a bin and the pad of
// the rest. (most is maxBin but in tests, and at least 2.)
func appendPad(b []byte, n, most uint64) []byte {
	switch {
	case n == 1:
		return append(b, 0xc0)
	case n-2 < 1<<8 && n-2 <= most:
		return zeros(append(b, 0xc4, byte(n-2)), n-2)
	case n-3 < 1<<16 && n-3 <= most:
		return zeros(append(b, 0xc5, byte((n-3)>>8), byte(n-3)), n-3)
	case n-5 <= most:
		return zeros(append(b, 0xc6, byte((n-5)>>24), byte((n-5)>>16), byte((n-5)>>8), byte(n-5)), n-5)
	}
	// [bin, pad]: 1 + (5 + k) + rest, the rest at least 1 byte
	k := min(most, n-7)
	b = zeros(append(b, 0x92, 0xc6, byte(k>>24), byte(k>>16), byte(k>>8), byte(k)), k)
	return appendPad(b, n-6-k, most)
}

// zeros appends n zero bytes.
func zeros(b []byte, n uint64) []byte {
	b = slices.Grow(b, int(n))
	b = b[:len(b)+int(n)]
	clear(b[len(b)-int(n):])
	return b
}
