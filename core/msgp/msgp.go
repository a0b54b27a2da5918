// Package msgp is the core's msgpack reader and writer: the functions of
// github.com/tinylib/msgp/msgp that the core and its JSON layer (wirejson)
// call, with the same names, signatures, results and errors (error texts
// included), and the core's readers of the forms a request holds most
// (fast.go), held to those functions. It is no general msgpack library:
// it lives outside core/internal only so that wirejson, a layer above the
// core, can read and write the same bytes the same way.
//
// The core reads and writes the wire format of docs/SPEC.md §2 through it
// rather than through tinylib/msgp because that package also links
// encoding/json, reflect and fmt into anything that imports it, which the
// WebAssembly module does not use. tinylib/msgp stays the reference: the
// tests compare every function here with its namesake there over every
// length boundary, every prefix of a truncated value and every wrong type.
package msgp

import "encoding/binary"

// Type is a msgpack wire type, numbered as tinylib/msgp numbers its Type
// (including its pseudo-types for the time and complex extensions).
type Type byte

// The types NextType reports; the zero Type is InvalidType.
const (
	InvalidType Type = iota
	StrType
	BinType
	MapType
	ArrayType
	Float64Type
	Float32Type
	BoolType
	IntType
	UintType
	NilType
	DurationType
	ExtensionType
	Complex64Type
	Complex128Type
	TimeType
	NumberType
)

// String names t as tinylib/msgp does (its error texts quote these names).
func (t Type) String() string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return "<invalid>"
}

var typeNames = [...]string{StrType: "str", BinType: "bin", MapType: "map", ArrayType: "array",
	Float64Type: "float64", Float32Type: "float32", BoolType: "bool", IntType: "int",
	UintType: "uint", NilType: "nil", ExtensionType: "ext", NumberType: "number"}

// The extension types tinylib/msgp gives a meaning of its own (NextType
// reports them as TimeType, Complex64Type and Complex128Type).
const (
	complex64Ext  = 3
	complex128Ext = 4
	timeExt       = 5
	msgTimeExt    = -1
)

// How a value's length follows from its first bytes (see spec).
const (
	fixed   = iota // head bytes in all, then n values (fixarray, fixmap)
	extra8         // head bytes, then b[1] more bytes
	extra16        // head bytes, then the big-endian uint16 at b[1:] more bytes
	extra32        // head bytes, then the big-endian uint32 at b[1:] more bytes
	items16        // head bytes, then the uint16 at b[1:] values (×2 for a map)
	items32        // head bytes, then the uint32 at b[1:] values (×2 for a map)
)

// spec describes the values a first byte starts: their type, the bytes of
// the head (the whole value for a scalar of fixed size), and how the rest
// is counted. head is 0 only for 0xc1, the byte msgpack never uses.
type spec struct {
	typ  Type
	head uint8
	mode uint8
	n    uint8 // fixed: the values after the head (fixarray n, fixmap 2n)
}

var specs = makeSpecs()

func makeSpecs() (t [256]spec) {
	for c := range 0x80 {
		t[c] = spec{typ: IntType, head: 1} // positive fixint
	}
	for c := 0x80; c < 0x90; c++ {
		t[c] = spec{typ: MapType, head: 1, n: uint8(2 * (c & 0x0f))}
	}
	for c := 0x90; c < 0xa0; c++ {
		t[c] = spec{typ: ArrayType, head: 1, n: uint8(c & 0x0f)}
	}
	for c := 0xa0; c < 0xc0; c++ {
		t[c] = spec{typ: StrType, head: uint8(1 + c&0x1f)}
	}
	for c := 0xe0; c < 0x100; c++ {
		t[c] = spec{typ: IntType, head: 1} // negative fixint
	}
	for c, s := range map[byte]spec{
		0xc0: {typ: NilType, head: 1}, 0xc2: {typ: BoolType, head: 1}, 0xc3: {typ: BoolType, head: 1},
		0xc4: {BinType, 2, extra8, 0}, 0xc5: {BinType, 3, extra16, 0}, 0xc6: {BinType, 5, extra32, 0},
		0xc7: {ExtensionType, 3, extra8, 0}, 0xc8: {ExtensionType, 4, extra16, 0}, 0xc9: {ExtensionType, 6, extra32, 0},
		0xca: {typ: Float32Type, head: 5}, 0xcb: {typ: Float64Type, head: 9},
		0xcc: {typ: UintType, head: 2}, 0xcd: {typ: UintType, head: 3}, 0xce: {typ: UintType, head: 5}, 0xcf: {typ: UintType, head: 9},
		0xd0: {typ: IntType, head: 2}, 0xd1: {typ: IntType, head: 3}, 0xd2: {typ: IntType, head: 5}, 0xd3: {typ: IntType, head: 9},
		0xd4: {typ: ExtensionType, head: 3}, 0xd5: {typ: ExtensionType, head: 4}, 0xd6: {typ: ExtensionType, head: 6},
		0xd7: {typ: ExtensionType, head: 10}, 0xd8: {typ: ExtensionType, head: 18},
		0xd9: {StrType, 2, extra8, 0}, 0xda: {StrType, 3, extra16, 0}, 0xdb: {StrType, 5, extra32, 0},
		0xdc: {ArrayType, 3, items16, 0}, 0xdd: {ArrayType, 5, items32, 0},
		0xde: {MapType, 3, items16, 0}, 0xdf: {MapType, 5, items32, 0},
	} {
		t[c] = s
	}
	return t
}

// NextType returns the type of the value b starts with, InvalidType for an
// empty b or the byte 0xc1. An ext value whose head is whole and whose type
// is one tinylib/msgp decodes itself is reported as that pseudo-type.
func NextType(b []byte) Type {
	if len(b) == 0 {
		return InvalidType
	}
	s := specs[b[0]]
	if s.typ != ExtensionType || len(b) <= int(s.head) {
		return s.typ
	}
	return extPseudoType(int8(b[extTypeAt(s)]))
}

// extTypeAt is the index of the type byte in an ext value's head.
func extTypeAt(s spec) int {
	if s.mode == fixed {
		return 1
	}
	return int(s.head) - 1
}

func extPseudoType(t int8) Type {
	switch t {
	case timeExt, msgTimeExt:
		return TimeType
	case complex128Ext:
		return Complex128Type
	case complex64Ext:
		return Complex64Type
	}
	return ExtensionType
}

func be16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }
func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }
func be64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }
