package msgp

import "encoding/binary"

// The readers below are the core's own, beyond tinylib/msgp: each reads the
// forms a request holds most first, with no call (calls are dear in Go's
// WebAssembly code), and reports ok false for anything else, another type
// or a value cut short, leaving b for the caller to diagnose with NextType.
// Where ok is true, each gives what the tinylib/msgp reader it names gives
// (the tests hold them to it).

// StrHeader decodes the header of a str value held whole in b: the header's
// length h and the string's length n, so that the string is b[h:h+n].
func StrHeader(b []byte) (h, n int, ok bool) {
	if len(b) > 0 && b[0]&0xe0 == 0xa0 { // fixstr, inlined
		n = int(b[0] & 0x1f)
		return 1, n, n < len(b)
	}
	return strHeaderLong(b)
}

// strHeaderLong is StrHeader for the str8, str16 and str32 forms.
func strHeaderLong(b []byte) (h, n int, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	switch c := b[0]; {
	case c == 0xd9 && len(b) >= 2:
		h, n = 2, int(b[1])
	case c == 0xda && len(b) >= 3:
		h, n = 3, int(binary.BigEndian.Uint16(b[1:]))
	case c == 0xdb && len(b) >= 5:
		h, n = 5, int(binary.BigEndian.Uint32(b[1:]))
	default:
		return 0, 0, false
	}
	return h, n, n <= len(b)-h
}

// MapHeader reads a map header: ReadMapHeaderBytes, a fixmap first.
func MapHeader(b []byte) (n uint32, rest []byte, ok bool) {
	if len(b) > 0 && b[0]&0xf0 == 0x80 { // fixmap, the common case
		return uint32(b[0] & 0x0f), b[1:], true
	}
	n, rest, err := ReadMapHeaderBytes(b)
	return n, rest, err == nil
}

// ArrayHeader reads an array header: ReadArrayHeaderBytes, each form read
// without a further call while five bytes follow.
func ArrayHeader(b []byte) (n uint32, rest []byte, ok bool) {
	if len(b) >= 5 {
		switch c := b[0]; {
		case c&0xf0 == 0x90: // fixarray
			return uint32(c & 0x0f), b[1:], true
		case c == 0xdc:
			return uint32(binary.BigEndian.Uint16(b[1:])), b[3:], true
		case c == 0xdd:
			return binary.BigEndian.Uint32(b[1:]), b[5:], true
		}
	}
	n, rest, err := ReadArrayHeaderBytes(b)
	return n, rest, err == nil
}

// Int reads any int, signed or unsigned: ReadInt64Bytes, or for an unsigned
// int ReadUint64Bytes, where a value above the int64 range is
// math.MaxInt64 with big true. The common forms (a positive fixint, a
// uint16 or uint32: v, a budget below 2^32) are read without a further call.
func Int(b []byte) (v int64, big bool, rest []byte, ok bool) {
	if len(b) > 0 {
		switch c := b[0]; {
		case c < 0x80: // positive fixint
			return int64(c), false, b[1:], true
		case c == 0xcd && len(b) >= 3:
			return int64(binary.BigEndian.Uint16(b[1:])), false, b[3:], true
		case c == 0xce && len(b) >= 5:
			return int64(binary.BigEndian.Uint32(b[1:])), false, b[5:], true
		}
	}
	switch NextType(b) {
	case IntType:
		v, rest, err := ReadInt64Bytes(b)
		return v, false, rest, err == nil
	case UintType:
		u, rest, err := ReadUint64Bytes(b)
		if u > 1<<63-1 {
			return 1<<63 - 1, true, rest, err == nil
		}
		return int64(u), false, rest, err == nil
	}
	return 0, false, b, false
}
