package core

import (
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/core/msgp"
)

// The wire decoders' readers of one value (decode.go, addstep_decode.go,
// compare_wire.go): msgpack read with core/msgp, a problem answered with the
// error and message of docs/SPEC.md §6. Their errors have an empty path;
// the caller prepends its own segment.

func endsEarly() *Error {
	return newError(CodeMalformedRequest, "", "the request ends in the middle of this value; it was cut short")
}

func typeName(b []byte) string {
	if len(b) == 0 {
		return "the end of the request"
	}
	if b[0] == 0xc1 {
		return "the never-used byte 0xc1"
	}
	w := w()
	switch t := msgp.NextType(b); t {
	case msgp.IntType, msgp.UintType:
		return w.Int
	case msgp.StrType:
		return w.Str
	case msgp.BinType:
		return w.Bin
	case msgp.Float32Type, msgp.Float64Type:
		return w.Float
	case msgp.BoolType:
		return w.Bool
	case msgp.NilType:
		return w.Nil
	case msgp.ArrayType:
		return w.Array
	case msgp.MapType:
		return w.Map
	default:
		if typ, _, ok := extOf(b); ok && typ == abi.ExtBigInt {
			return w.BigInt
		}
		return w.Ext
	}
}

func wrongType(b []byte, want string) *Error {
	if len(b) == 0 {
		return endsEarly()
	}
	if e := unreadableError(b); e != nil {
		return e
	}
	return newError(CodeMalformedRequest, "", "expected "+want+", found "+typeName(b))
}

// notRead is the error of a value a reader of core/msgp did not read: one
// of type t cut short, or a value of another type than want names.
func notRead(b []byte, t msgp.Type, want string) *Error {
	if len(b) > 0 && msgp.NextType(b) == t {
		return endsEarly()
	}
	return wrongType(b, want)
}

func readMapHeader(b []byte) (uint32, []byte, *Error) {
	n, rest, ok := msgp.MapHeader(b)
	if !ok {
		return 0, b, notRead(b, msgp.MapType, w().Map)
	}
	return n, rest, nil
}

func readArrayHeader(b []byte) (uint32, []byte, *Error) {
	n, rest, ok := msgp.ArrayHeader(b)
	if !ok {
		return 0, b, notRead(b, msgp.ArrayType, w().Array)
	}
	return n, rest, nil
}

// readStrN reads a str value, checks its UTF-8 and counts its code points
// (one pass).
func readStrN(b []byte) (string, int, []byte, *Error) {
	if n, ok := shortASCII(b); ok {
		return unsafe.String(&b[1], n), n, b[1+n:], nil
	}
	h, n, ok := msgp.StrHeader(b)
	if !ok {
		return "", 0, b, notRead(b, msgp.StrType, w().Text)
	}
	v := b[h : h+n]
	chars, valid := utf8Count(v)
	if !valid {
		return "", 0, b, invalidUTF8(v, "this text")
	}
	return unsafe.String(unsafe.SliceData(v), len(v)), chars, b[h+n:], nil
}

// readStr reads a str value and checks its UTF-8.
func readStr(b []byte) (string, []byte, *Error) {
	s, _, rest, err := readStrN(b)
	return s, rest, err
}

// readKey reads a map key: a str of valid UTF-8. Errors carry the map's path.
func readKey(b []byte) (string, []byte, *Error) {
	if n, ok := shortASCII(b); ok {
		return unsafe.String(&b[1], n), b[1+n:], nil
	}
	h, n, ok := msgp.StrHeader(b)
	switch {
	case ok:
	case len(b) == 0:
		return "", b, newError(CodeMalformedRequest, "", "the request ends where a key should be; it was cut short")
	case msgp.NextType(b) == msgp.StrType:
		return "", b, newError(CodeMalformedRequest, "", "the request ends inside a key; it was cut short")
	default:
		if e := unreadableError(b); e != nil {
			return "", b, e
		}
		return "", b, newError(CodeMalformedRequest, "", w().Key+", found "+typeName(b))
	}
	v := b[h : h+n]
	if !validUTF8(v) {
		return "", b, invalidUTF8(v, "a key of "+w().InThisMap)
	}
	return unsafe.String(unsafe.SliceData(v), len(v)), b[h+n:], nil
}

func invalidUTF8(v []byte, what string) *Error {
	i := 0
	for i < len(v) {
		r, size := utf8.DecodeRune(v[i:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		i += size
	}
	return newError(CodeInvalidUTF8, "", what+" is not valid UTF-8 (bad byte 0x"+strconv.FormatUint(uint64(v[i]), 16)+" at byte "+strconv.Itoa(i)+"); send well-formed UTF-8 text, with no surrogate code points")
}

// readInt reads any msgpack int. big reports a uint64 above the int64 range.
func readInt(b []byte) (v int64, big bool, rest []byte, err *Error) {
	v, big, rest, ok := msgp.Int(b)
	if !ok {
		if t := msgp.NextType(b); len(b) > 0 && (t == msgp.IntType || t == msgp.UintType) {
			return 0, false, b, endsEarly()
		}
		return 0, false, b, wrongType(b, w().Int)
	}
	return v, big, rest, nil
}

func intText(v int64, big bool) string {
	if big {
		return "above 2^63"
	}
	return strconv.FormatInt(v, 10)
}

func duplicateKey(key string) *Error {
	return newError(CodeDuplicateKey, fieldSeg(key), "the key "+quote(key)+" appears twice in "+w().InThisMap+"; send each key once")
}

func unknownField(key, where, known string) *Error {
	return newError(CodeUnknownField, fieldSeg(key), "unknown field "+quote(key)+" in "+where+"; the fields are: "+known)
}

func missingField(key, where string) *Error {
	return newError(CodeMissingField, "."+key, where+" needs the field "+quote(key))
}
