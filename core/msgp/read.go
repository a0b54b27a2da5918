package msgp

import "math"

// Each reader takes the value at the start of b and returns it with the
// bytes after it. On an error the value is the zero value and the bytes are
// what tinylib/msgp returns there: nil, or b itself where it says so.

// ReadMapHeaderBytes reads a map header: the number of key-value pairs.
func ReadMapHeaderBytes(b []byte) (sz uint32, o []byte, err error) {
	return readHeader(b, 0x80, 0xde, MapType)
}

// ReadArrayHeaderBytes reads an array header: the number of elements.
func ReadArrayHeaderBytes(b []byte) (sz uint32, o []byte, err error) {
	return readHeader(b, 0x90, 0xdc, ArrayType)
}

// readHeader reads the header of a container of type t: fix | n (n < 16),
// or the byte c16 (c16+1) and a big-endian uint16 (uint32).
func readHeader(b []byte, fix, c16 byte, t Type) (uint32, []byte, error) {
	if len(b) < 1 {
		return 0, nil, ErrShortBytes
	}
	switch lead := b[0]; {
	case lead&0xf0 == fix:
		return uint32(lead & 0x0f), b[1:], nil
	case lead == c16:
		if len(b) < 3 {
			return 0, nil, ErrShortBytes
		}
		return uint32(be16(b[1:])), b[3:], nil
	case lead == c16+1:
		if len(b) < 5 {
			return 0, nil, ErrShortBytes
		}
		return be32(b[1:]), b[5:], nil
	default:
		return 0, nil, badPrefix(t, lead)
	}
}

// ReadStringZC reads a str value; v is its bytes, within b.
func ReadStringZC(b []byte) (v []byte, o []byte, err error) {
	if len(b) < 1 {
		return nil, nil, ErrShortBytes
	}
	lead := b[0]
	if lead&0xe0 == 0xa0 { // fixstr
		return sized(b, 1, int(lead&0x1f))
	}
	if lead < 0xd9 || lead > 0xdb {
		return nil, nil, TypeError{Method: StrType, Encoded: specs[lead].typ}
	}
	return readSized(b, lead-0xd9)
}

// ReadStringBytes reads a str value as a string (a copy).
func ReadStringBytes(b []byte) (string, []byte, error) {
	v, o, err := ReadStringZC(b)
	return string(v), o, err
}

// ReadBytesZC reads a bin value; v is its bytes, within b.
func ReadBytesZC(b []byte) (v []byte, o []byte, err error) {
	if len(b) < 1 {
		return nil, nil, ErrShortBytes
	}
	if lead := b[0]; lead < 0xc4 || lead > 0xc6 {
		return nil, nil, badPrefix(BinType, lead)
	}
	return readSized(b, b[0]-0xc4)
}

// readSized reads a str or bin value whose length follows its first byte
// in 1 << w bytes (w is 0, 1 or 2).
func readSized(b []byte, w byte) ([]byte, []byte, error) {
	h := 1 + 1<<w
	if len(b) < h {
		return nil, nil, ErrShortBytes
	}
	switch w {
	case 0:
		return sized(b, h, int(b[1]))
	case 1:
		return sized(b, h, int(be16(b[1:])))
	}
	return sized(b, h, int(be32(b[1:])))
}

// sized cuts a value of a head of h bytes and n bytes of data off b.
func sized(b []byte, h, n int) ([]byte, []byte, error) {
	if len(b)-h < n {
		return nil, nil, ErrShortBytes
	}
	return b[h : h+n], b[h+n:], nil
}

// ReadNilBytes reads a nil.
func ReadNilBytes(b []byte) ([]byte, error) {
	if len(b) < 1 {
		return nil, ErrShortBytes
	}
	if b[0] != 0xc0 {
		return b, badPrefix(NilType, b[0])
	}
	return b[1:], nil
}

// ReadBoolBytes reads a bool.
func ReadBoolBytes(b []byte) (bool, []byte, error) {
	if len(b) < 1 {
		return false, b, ErrShortBytes
	}
	switch b[0] {
	case 0xc3:
		return true, b[1:], nil
	case 0xc2:
		return false, b[1:], nil
	}
	return false, b, badPrefix(BoolType, b[0])
}

// ReadFloat64Bytes reads a float64, or a float32 made a float64. A b shorter
// than a float64 that is not a whole float32 is ErrShortBytes, whatever its
// type, as tinylib/msgp has it.
func ReadFloat64Bytes(b []byte) (f float64, o []byte, err error) {
	if len(b) >= 5 && b[0] == 0xca {
		return float64(math.Float32frombits(be32(b[1:]))), b[5:], nil
	}
	if len(b) < 9 {
		return 0, nil, ErrShortBytes
	}
	if b[0] != 0xcb {
		return 0, nil, badPrefix(Float64Type, b[0])
	}
	return math.Float64frombits(be64(b[1:])), b[9:], nil
}

// readFloat32Bytes reads a float32 (ReadIntfBytes keeps it a float32).
func readFloat32Bytes(b []byte) (float32, []byte, error) {
	if len(b) < 5 {
		return 0, nil, ErrShortBytes
	}
	if b[0] != 0xca {
		return 0, nil, TypeError{Method: Float32Type, Encoded: specs[b[0]].typ}
	}
	return math.Float32frombits(be32(b[1:])), b[5:], nil
}

// intBody reads the big-endian body of the int or uint value at the start
// of b: its bits (sign-extended for an int), whether it is signed, and the
// value's length; n is 0 for a value cut short and -1 for one not an int.
func intBody(b []byte) (bits uint64, signed bool, n int) {
	lead := b[0]
	switch {
	case lead < 0x80:
		return uint64(lead), true, 1
	case lead >= 0xe0:
		return uint64(int64(int8(lead))), true, 1
	case lead < 0xcc || lead > 0xd3:
		return 0, false, -1
	}
	signed = lead >= 0xd0
	w := 1 << ((lead - 0xcc) & 3) // 1, 2, 4 or 8 bytes
	if len(b) < 1+w {
		return 0, signed, 0
	}
	switch w {
	case 1:
		bits = uint64(b[1])
		if signed {
			bits = uint64(int64(int8(b[1])))
		}
	case 2:
		bits = uint64(be16(b[1:]))
		if signed {
			bits = uint64(int64(int16(bits)))
		}
	case 4:
		bits = uint64(be32(b[1:]))
		if signed {
			bits = uint64(int64(int32(bits)))
		}
	default:
		bits = be64(b[1:])
	}
	return bits, signed, 1 + w
}

// ReadInt64Bytes reads an int, or a uint in the int64 range.
func ReadInt64Bytes(b []byte) (i int64, o []byte, err error) {
	if len(b) < 1 {
		return 0, nil, ErrShortBytes
	}
	bits, signed, n := intBody(b)
	switch {
	case n < 0:
		return 0, nil, badPrefix(IntType, b[0])
	case n == 0:
		return 0, nil, ErrShortBytes
	case !signed && bits > math.MaxInt64:
		return 0, nil, UintOverflow{Value: bits, FailedBitsize: 64}
	}
	return int64(bits), b[n:], nil
}

// ReadUint64Bytes reads a uint, or an int ≥ 0.
func ReadUint64Bytes(b []byte) (u uint64, o []byte, err error) {
	if len(b) < 1 {
		return 0, nil, ErrShortBytes
	}
	bits, signed, n := intBody(b)
	switch {
	case n < 0:
		return 0, nil, badPrefix(UintType, b[0])
	case n == 0:
		return 0, nil, ErrShortBytes
	case signed && int64(bits) < 0:
		return 0, nil, UintBelowZero{Value: int64(bits)}
	}
	return bits, b[n:], nil
}

// Skip passes over the value at the start of b, containers with all they
// hold. On an error the bytes returned are those at the value that failed.
func Skip(b []byte) ([]byte, error) {
	return skip(b, 0)
}

func skip(b []byte, depth int) ([]byte, error) {
	// A loop over the values, with the items left in each open array or
	// map on a stack: the same walk and errors as recursing, without a
	// call per value.
	var small [16]uint64
	open := small[:0]
	for {
		if depth+len(open) >= recursionLimit {
			return b, ErrRecursion
		}
		var size, items uint64
		switch { // the common values first, then any by its spec
		case len(b) > 0 && b[0] < 0x80: // a positive fixint
			size = 1
		case len(b) > 0 && b[0]&0xe0 == 0xa0: // a fixstr
			size = 1 + uint64(b[0]&0x1f)
		case len(b) > 0 && b[0]&0xe0 == 0x80: // a fixmap, a fixarray
			size, items = 1, uint64(b[0]&0x0f)<<(1-b[0]>>4&1) // a map's keys and values
		case len(b) > 1 && b[0] == 0xd9: // a str8
			size = 2 + uint64(b[1])
		case len(b) > 2 && b[0] == 0xda: // a str16
			size = 3 + uint64(be16(b[1:]))
		default:
			var err error
			if size, items, err = extent(b); err != nil {
				return b, err
			}
		}
		if uint64(len(b)) < size {
			return b, ErrShortBytes
		}
		b = b[size:]
		if items > 0 {
			open = append(open, items)
			continue
		}
		for len(open) > 0 {
			if open[len(open)-1]--; open[len(open)-1] > 0 {
				break
			}
			open = open[:len(open)-1]
		}
		if len(open) == 0 {
			return b, nil
		}
	}
}

// extent returns the bytes of the value at the start of b that precede the
// values it holds (all of a scalar), and the number of values it holds.
func extent(b []byte) (size, items uint64, err error) {
	if len(b) == 0 {
		return 0, 0, ErrShortBytes
	}
	s := specs[b[0]]
	if s.head == 0 {
		return 0, 0, InvalidPrefixError(b[0])
	}
	size = uint64(s.head)
	if s.mode == fixed {
		return size, uint64(s.n), nil
	}
	if len(b) < int(s.head) {
		return 0, 0, ErrShortBytes
	}
	var n uint64
	if s.mode == extra8 {
		n = uint64(b[1])
	} else if s.mode == extra16 || s.mode == items16 {
		n = uint64(be16(b[1:]))
	} else {
		n = uint64(be32(b[1:]))
	}
	switch {
	case s.mode <= extra32:
		return size + n, 0, nil
	case s.typ == MapType:
		return size, 2 * n, nil
	}
	return size, n, nil
}
