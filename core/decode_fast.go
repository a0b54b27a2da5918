package core

import (
	"encoding/binary"
	"unsafe"
)

// The fast paths of the wire decoder (decode.go) and the key literals they
// compare.

// fastStep, fastBlock and fastMessage decode the common form of a step, of a
// text block and of a message
// (a fixmap of the two keys, in either order, with valid str values) with few
// calls, which are expensive in Go's WebAssembly code. Anything else,
// including every error, makes them return a negative count and b unchanged;
// the general decoder then decodes the value from the start, so errors and
// their order are the general decoder's.

var (
	litRawOutput   = mkKeyLit(keyRawOutput)
	litObservation = mkKeyLit(keyObservation)
	litType        = mkKeyLit(keyType)
	litText        = mkKeyLit(keyText)
	litTextValue   = mkKeyLit(typeText) // the value "text" of a block's type
	litRole        = mkKeyLit(keyRole)
	litContent     = mkKeyLit(keyContent)
	// The roles as values.
	litUser      = mkKeyLit(key(RoleUser))
	litAssistant = mkKeyLit(key(RoleAssistant))
	litSystem    = mkKeyLit(key(RoleSystem))
)

// keyLit is a short str encoded (fixstr header and bytes) as two
// overlapping little-endian words, compared without a call.
type keyLit struct {
	n      int // encoded length, 5 to 16
	w0, w1 uint64
	wide   bool // 8-byte words; else 4-byte
}

// mkKeyLit makes the literal of an encoded key (encode.go's keys).
func mkKeyLit(key string) keyLit {
	enc := []byte(key)
	k := keyLit{n: len(enc), wide: len(enc) >= 8}
	if k.wide {
		k.w0 = binary.LittleEndian.Uint64(enc)
		k.w1 = binary.LittleEndian.Uint64(enc[len(enc)-8:])
	} else {
		k.w0 = uint64(binary.LittleEndian.Uint32(enc))
		k.w1 = uint64(binary.LittleEndian.Uint32(enc[len(enc)-4:]))
	}
	return k
}

// at reports whether b[off:] starts with the encoded key. It is small
// enough to be inlined: the fast paths compare keys without a call.
func (k *keyLit) at(b []byte, off int) bool {
	if off+k.n > len(b) {
		return false
	}
	p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), off)
	if k.wide {
		return load64(p) == k.w0 && load64(unsafe.Add(p, k.n-8)) == k.w1
	}
	return uint64(load32(p)) == k.w0 && uint64(load32(unsafe.Add(p, k.n-4))) == k.w1
}

// fastStr reads a str value of valid UTF-8 at b[off:]; chars < 0 when it is
// anything else. The header is decoded here (msgp.StrHeader is not inlined), so
// that a value costs one call, utf8Count's.
func fastStr(b []byte, off int) (s string, chars, next int) {
	if off >= len(b) {
		return "", -1, off
	}
	h, n := 1, 0
	switch c := b[off]; {
	case c&0xe0 == 0xa0:
		n = int(c & 0x1f)
	case c == 0xd9 && off+2 <= len(b):
		h, n = 2, int(b[off+1])
	case c == 0xda && off+3 <= len(b):
		h, n = 3, int(binary.BigEndian.Uint16(b[off+1:]))
	default: // a str of 64 KiB or more: the general path
		return "", -1, off
	}
	if n > len(b)-off-h {
		return "", -1, off
	}
	v := b[off+h : off+h+n]
	chars, ok := utf8Count(v)
	if !ok {
		return "", -1, off
	}
	return unsafe.String(unsafe.SliceData(v), n), chars, off + h + n
}

func fastStep(b []byte) (s Step, rawChars, obsChars int, rest []byte) {
	if len(b) == 0 || b[0] != 0x82 {
		return s, -1, -1, b
	}
	off := 1
	for range 2 {
		var v string
		var c int
		switch {
		case rawChars == 0 && litRawOutput.at(b, off):
			if v, c, off = fastStr(b, off+litRawOutput.n); c < 0 {
				return Step{}, -1, -1, b
			}
			s.RawOutput, rawChars = v, c+1
		case obsChars == 0 && litObservation.at(b, off):
			if v, c, off = fastStr(b, off+litObservation.n); c < 0 {
				return Step{}, -1, -1, b
			}
			s.Observation, obsChars = v, c+1
		default:
			return Step{}, -1, -1, b
		}
	}
	return s, rawChars - 1, obsChars - 1, b[off:]
}

func fastBlock(b []byte) (blk Block, chars int, rest []byte) {
	if len(b) == 0 || b[0] != 0x82 {
		return blk, -1, b
	}
	off := 1
	chars = -1
	for range 2 {
		switch {
		case blk.Type == "" && litType.at(b, off) && litTextValue.at(b, off+litType.n):
			blk.Type = BlockTypeText
			off += litType.n + litTextValue.n
		case chars < 0 && litText.at(b, off):
			var c int
			if blk.Text, c, off = fastStr(b, off+litText.n); c < 0 {
				return Block{}, -1, b
			}
			chars = c
		default:
			return Block{}, -1, b
		}
	}
	return blk, chars, b[off:]
}

// fastMessage decodes the common form of a message: a fixmap of role (one
// of the three roles) then content, whose blocks decodeBlocks decodes.
// ok is false, and nothing decoded, when b starts with anything else; the
// general decoder then decodes it from the start. An error in the content
// is the one the general decoder finds there: a valid role before it is
// no error.
func fastMessage(b []byte, counts *[]int, sc *scratch) (m Message, rest []byte, ok bool, err *Error) {
	if len(b) == 0 || b[0] != 0x82 || !litRole.at(b, 1) {
		return m, b, false, nil
	}
	off := 1 + litRole.n
	switch {
	case litUser.at(b, off):
		m.Role, off = RoleUser, off+litUser.n
	case litAssistant.at(b, off):
		m.Role, off = RoleAssistant, off+litAssistant.n
	case litSystem.at(b, off):
		m.Role, off = RoleSystem, off+litSystem.n
	default:
		return m, b, false, nil
	}
	if !litContent.at(b, off) {
		return Message{}, b, false, nil
	}
	m.Content, rest, err = decodeBlocks(b[off+litContent.n:], counts, sc)
	if err != nil {
		return m, rest, true, err.within(fieldSeg("content"))
	}
	return m, rest, true, nil
}
