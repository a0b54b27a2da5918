package msgp

import (
	"encoding/binary"
	"math"
)

// Each writer appends one value to b in its shortest form, byte for byte as
// tinylib/msgp writes it (docs/SPEC.md §2.1).

// AppendMapHeader appends the header of a map of sz key-value pairs.
func AppendMapHeader(b []byte, sz uint32) []byte {
	return appendHeader(b, 0x80, 0xde, sz)
}

// AppendArrayHeader appends the header of an array of sz elements.
func AppendArrayHeader(b []byte, sz uint32) []byte {
	return appendHeader(b, 0x90, 0xdc, sz)
}

func appendHeader(b []byte, fix, c16 byte, sz uint32) []byte {
	switch {
	case sz <= 15:
		return append(b, fix|byte(sz))
	case sz <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, c16), uint16(sz))
	}
	return binary.BigEndian.AppendUint32(append(b, c16+1), sz)
}

// AppendString appends s as a str.
func AppendString(b []byte, s string) []byte {
	switch n := len(s); {
	case n <= 31:
		b = append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		b = append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

// AppendInt64 appends i as an int: a fixint, else the smallest of int8
// (negative i only), int16, int32 and int64 that holds it.
func AppendInt64(b []byte, i int64) []byte {
	switch {
	case i >= -32 && i <= math.MaxInt8:
		return append(b, byte(i))
	case i >= math.MinInt8 && i < 0:
		return append(b, 0xd0, byte(i))
	case i >= math.MinInt16 && i <= math.MaxInt16:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(i))
	case i >= math.MinInt32 && i <= math.MaxInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(i))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(i))
}

// AppendUint64 appends u as a uint: a fixint, else the smallest of uint8,
// uint16, uint32 and uint64 that holds it.
func AppendUint64(b []byte, u uint64) []byte {
	switch {
	case u <= math.MaxInt8:
		return append(b, byte(u))
	case u <= math.MaxUint8:
		return append(b, 0xcc, byte(u))
	case u <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(u))
	case u <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(u))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xcf), u)
}

// AppendFloat64 appends f as a float64.
func AppendFloat64(b []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(append(b, 0xcb), math.Float64bits(f))
}
