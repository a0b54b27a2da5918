package msgp

import "math"

// RawExtension is an ext value ReadIntfBytes has no meaning for: its type
// and a copy of its data (nil when empty), as tinylib/msgp's RawExtension.
type RawExtension struct {
	Data []byte
	Type int8
}

// ReadIntfBytes reads any value as tinylib/msgp's ReadIntfBytes does: a map
// as map[string]any (bin keys too), an array as []any, an int as int64, a
// uint as uint64, a float32 as float32, a float64 as float64, str as string,
// bin as a copy ([]byte), nil as nil, bool, the complex extensions as
// complex64 and complex128, any other ext as *RawExtension, timestamps too
// (readTime).
// On an error it returns, as tinylib/msgp does, what it had read so far.
func ReadIntfBytes(b []byte) (i any, o []byte, err error) {
	return readIntf(b, 0)
}

func readIntf(b []byte, depth int) (i any, o []byte, err error) {
	if depth >= recursionLimit {
		return nil, nil, ErrRecursion
	}
	if len(b) < 1 {
		return nil, nil, ErrShortBytes
	}
	switch NextType(b) {
	case MapType:
		return readMapIntf(b, depth+1)
	case ArrayType:
		return readArrayIntf(b, depth)
	case Float32Type:
		return readFloat32Bytes(b)
	case Float64Type:
		return ReadFloat64Bytes(b)
	case IntType:
		return ReadInt64Bytes(b)
	case UintType:
		return ReadUint64Bytes(b)
	case BoolType:
		return ReadBoolBytes(b)
	case TimeType:
		return readTime(b)
	case Complex64Type:
		return readComplex64(b)
	case Complex128Type:
		return readComplex128(b)
	case ExtensionType:
		return readRawExt(b)
	case NilType:
		o, err = ReadNilBytes(b)
		return nil, o, err
	case BinType:
		v, o, err := ReadBytesZC(b)
		if len(v) == 0 {
			return []byte(nil), o, err
		}
		return append([]byte(nil), v...), o, err
	case StrType:
		return ReadStringBytes(b)
	}
	return nil, nil, InvalidPrefixError(b[0])
}

func readMapIntf(b []byte, depth int) (any, []byte, error) {
	if depth >= recursionLimit {
		return map[string]any(nil), nil, ErrRecursion
	}
	sz, o, err := ReadMapHeaderBytes(b)
	if err != nil {
		return map[string]any(nil), o, err
	}
	if int64(len(b)) < int64(sz)*3 { // a key takes 2 bytes at least, a value 1
		return map[string]any(nil), o, ErrShortBytes
	}
	m := make(map[string]any, int(sz))
	for range sz {
		if len(o) < 1 {
			return m, o, ErrShortBytes
		}
		var key []byte
		if key, o, err = readMapKey(o); err != nil {
			return m, o, err
		}
		var v any
		if v, o, err = readIntf(o, depth); err != nil {
			return m, o, err
		}
		m[string(key)] = v
	}
	return m, o, nil
}

// readMapKey reads a str key, or a bin one.
func readMapKey(b []byte) ([]byte, []byte, error) {
	k, o, err := ReadStringZC(b)
	if err == nil {
		return k, o, nil
	}
	if t, ok := err.(TypeError); ok && t.Encoded == BinType {
		return ReadBytesZC(b)
	}
	return nil, b, err
}

func readArrayIntf(b []byte, depth int) (any, []byte, error) {
	sz, o, err := ReadArrayHeaderBytes(b)
	if err != nil {
		return nil, o, err
	}
	if uint32(len(o)) < sz { // a value takes 1 byte at least
		return nil, o, ErrShortBytes
	}
	a := make([]any, int(sz))
	for k := range a {
		if a[k], o, err = readIntf(o, depth+1); err != nil {
			return a, o, err
		}
	}
	return a, o, nil
}

// readExt splits a whole ext value off b: its type, the bytes after it
// and its data. On an error the bytes after it are b.
func readExt(b []byte) (typ int8, remain, data []byte, err error) {
	if len(b) < 3 {
		return 0, b, nil, ErrShortBytes
	}
	s := specs[b[0]]
	if s.typ != ExtensionType {
		return 0, b, nil, badPrefix(ExtensionType, b[0])
	}
	off := int(s.head)
	if s.mode == fixed {
		off = 2
	}
	if len(b) < off {
		return 0, b, nil, ErrShortBytes
	}
	var sz int
	switch s.mode {
	case fixed:
		sz = int(s.head) - 2
	case extra8:
		sz = int(b[1])
	case extra16:
		sz = int(be16(b[1:]))
	default:
		sz = int(be32(b[1:]))
	}
	typ = int8(b[extTypeAt(s)])
	if len(b)-off < sz {
		return 0, b, nil, ErrShortBytes
	}
	return typ, b[off+sz:], b[off : off+sz : off+sz], nil
}

func readRawExt(b []byte) (any, []byte, error) {
	s := specs[b[0]]
	if len(b) < int(s.head) {
		return nil, nil, ErrShortBytes
	}
	e := &RawExtension{Type: int8(b[extTypeAt(s)])}
	_, o, data, err := readExt(b)
	if err != nil {
		return e, b, err
	}
	if len(data) > 0 {
		e.Data = append([]byte(nil), data...)
	}
	return e, o, nil
}

func readComplex64(b []byte) (any, []byte, error) {
	switch {
	case len(b) < 10:
		return complex64(0), nil, ErrShortBytes
	case b[0] != 0xd7: // fixext 8
		return complex64(0), nil, badPrefix(Complex64Type, b[0])
	case int8(b[1]) != complex64Ext:
		return complex64(0), nil, ExtensionTypeError{Got: int8(b[1]), Want: complex64Ext}
	}
	re, im := math.Float32frombits(be32(b[2:])), math.Float32frombits(be32(b[6:]))
	return complex(re, im), b[10:], nil
}

func readComplex128(b []byte) (any, []byte, error) {
	switch {
	case len(b) < 18:
		return complex128(0), nil, ErrShortBytes
	case b[0] != 0xd8: // fixext 16
		return complex128(0), nil, badPrefix(Complex128Type, b[0])
	case int8(b[1]) != complex128Ext:
		return complex128(0), nil, ExtensionTypeError{Got: int8(b[1]), Want: complex128Ext}
	}
	re, im := math.Float64frombits(be64(b[2:])), math.Float64frombits(be64(b[10:]))
	return complex(re, im), b[18:], nil
}

// readTime reads tinylib/msgp's time ext (type 5: seconds and nanoseconds,
// 12 bytes) or msgpack's timestamp (type -1: 4, 8 or 12 bytes), checked as
// tinylib/msgp checks them, but returns it as its *RawExtension where
// tinylib/msgp returns a time.Time: the core reads no time, and the time
// package would bring its formatting and time zones into the module.
func readTime(b []byte) (any, []byte, error) {
	if len(b) < 6 {
		return timeValue, nil, ErrShortBytes
	}
	typ, o, d, err := readExt(b)
	switch {
	case err != nil:
	case typ == timeExt && len(d) != 12:
		err = ErrShortBytes
	case typ == timeExt:
	case typ != msgTimeExt:
		err = ExtensionTypeError{Got: typ, Want: timeExt}
	case len(d) != 4 && len(d) != 8 && len(d) != 12:
		err = InvalidTimestamp{FieldLength: len(d)}
	case len(d) == 8 && be64(d)>>34 > 999999999:
		err = InvalidTimestamp{Nanos: int64(be64(d) >> 34)}
	case len(d) == 12 && be32(d) > 999999999:
		err = InvalidTimestamp{Nanos: int64(be32(d))}
	}
	if err != nil {
		return timeValue, o, err
	}
	return &RawExtension{Type: typ, Data: append([]byte(nil), d...)}, o, nil
}

// timeValue is readTime's value on an error (tinylib/msgp's: a zero
// time.Time; here a nil *RawExtension).
var timeValue = (*RawExtension)(nil)
