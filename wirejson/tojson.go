package wirejson

import (
	"encoding/base64"
	"errors"
	"strconv"

	"github.com/polyloop/assembly/core/msgp"

	"github.com/polyloop/assembly/core/jsonstr"
)

// FromMsgpack converts one msgpack value to deterministic JSON (map order
// kept, no HTML escaping, non-ASCII written as UTF-8), appending to dst, and
// returns the bytes after the value. Strings are escaped as Python's
// json.dumps(ensure_ascii=False) escapes them. bin becomes a base64 string and
// ext values are refused; responses contain neither.
func FromMsgpack(dst, src []byte) ([]byte, []byte, error) {
	return fromMsgpack(dst, src, 0)
}

func fromMsgpack(dst, b []byte, depth int) ([]byte, []byte, error) {
	if depth > maxDepth {
		return nil, b, errors.New("msgpack nested too deeply")
	}
	switch t := msgp.NextType(b); t {
	case msgp.MapType:
		return mapFromMsgpack(dst, b, depth)
	case msgp.ArrayType:
		return arrayFromMsgpack(dst, b, depth)
	default:
		return scalarFromMsgpack(dst, b, t)
	}
}

// mapFromMsgpack converts a map, its keys strs, in the order of the bytes.
func mapFromMsgpack(dst, b []byte, depth int) ([]byte, []byte, error) {
	n, b, err := msgp.ReadMapHeaderBytes(b)
	if err != nil {
		return nil, b, err
	}
	dst = append(dst, '{')
	for i := uint32(0); i < n; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		var k []byte
		k, b, err = msgp.ReadStringZC(b)
		if err != nil {
			return nil, b, errors.New("a map key is not a str")
		}
		dst = AppendQuoted(dst, string(k))
		dst = append(dst, ':')
		dst, b, err = fromMsgpack(dst, b, depth+1)
		if err != nil {
			return nil, b, err
		}
	}
	return append(dst, '}'), b, nil
}

// arrayFromMsgpack converts an array.
func arrayFromMsgpack(dst, b []byte, depth int) ([]byte, []byte, error) {
	n, b, err := msgp.ReadArrayHeaderBytes(b)
	if err != nil {
		return nil, b, err
	}
	dst = append(dst, '[')
	for i := uint32(0); i < n; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst, b, err = fromMsgpack(dst, b, depth+1)
		if err != nil {
			return nil, b, err
		}
	}
	return append(dst, ']'), b, nil
}

// scalarFromMsgpack converts a value of type t that is not a container.
func scalarFromMsgpack(dst, b []byte, t msgp.Type) ([]byte, []byte, error) {
	var err error
	switch t {
	case msgp.StrType:
		var s []byte
		s, b, err = msgp.ReadStringZC(b)
		if err != nil {
			return nil, b, err
		}
		return AppendQuoted(dst, string(s)), b, nil
	case msgp.BinType:
		var s []byte
		s, b, err = msgp.ReadBytesZC(b)
		if err != nil {
			return nil, b, err
		}
		return AppendQuoted(dst, base64.StdEncoding.EncodeToString(s)), b, nil
	case msgp.IntType:
		var v int64
		v, b, err = msgp.ReadInt64Bytes(b)
		return strconv.AppendInt(dst, v, 10), b, err
	case msgp.UintType:
		var v uint64
		v, b, err = msgp.ReadUint64Bytes(b)
		return strconv.AppendUint(dst, v, 10), b, err
	case msgp.BoolType:
		var v bool
		v, b, err = msgp.ReadBoolBytes(b)
		return strconv.AppendBool(dst, v), b, err
	case msgp.NilType:
		b, err = msgp.ReadNilBytes(b)
		return append(dst, "null"...), b, err
	case msgp.Float32Type, msgp.Float64Type:
		var v float64
		v, b, err = msgp.ReadFloat64Bytes(b)
		return strconv.AppendFloat(dst, v, 'g', -1, 64), b, err
	}
	return nil, b, errors.New("unsupported msgpack value")
}

// AppendQuoted appends s as a JSON string, escaped as Python's
// json.dumps(ensure_ascii=False) escapes it.
func AppendQuoted(dst []byte, s string) []byte { return jsonstr.Append(dst, s) }
