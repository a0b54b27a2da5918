package msgp

// The readers of fast.go against tinylib/msgp's readers they stand for,
// over the same inputs as the rest (compareAll): every corpus value cut at
// every prefix, every input of one and two bytes, random bytes. ok false
// stands for the reference's error, whatever it is: the core diagnoses a
// value these readers did not read with NextType.

import (
	"errors"
	"math"

	ref "github.com/tinylib/msgp/msgp"
)

// errNotRead stands for "ok false" here and for any error of the
// reference.
var errNotRead = errors.New("not read")

func init() {
	readers = append(readers,
		reader{"StrHeader", strHeaderRead, refRead(ref.ReadStringZC)},
		reader{"MapHeader", okRead(MapHeader), refRead(ref.ReadMapHeaderBytes)},
		reader{"ArrayHeader", okRead(ArrayHeader), refRead(ref.ReadArrayHeaderBytes)},
		reader{"Int", intRead, refInt},
	)
}

// strHeaderRead is StrHeader as a reader: the str's bytes and what follows.
func strHeaderRead(b []byte) (any, []byte, error) {
	h, n, ok := StrHeader(b)
	if !ok {
		return nil, nil, errNotRead
	}
	return b[h : h+n], b[h+n:], nil
}

func okRead[T any](f func([]byte) (T, []byte, bool)) func([]byte) (any, []byte, error) {
	return func(b []byte) (any, []byte, error) {
		v, rest, ok := f(b)
		if !ok {
			return nil, nil, errNotRead
		}
		return v, rest, nil
	}
}

// refRead is a reference reader with its error, any error, as errNotRead.
func refRead[T any](f func([]byte) (T, []byte, error)) func([]byte) (any, []byte, error) {
	return func(b []byte) (any, []byte, error) {
		v, rest, err := f(b)
		if err != nil {
			return nil, nil, errNotRead
		}
		return v, rest, nil
	}
}

// intValue is what Int reads: the value and whether it was above the int64
// range.
type intValue struct {
	v   int64
	big bool
}

func intRead(b []byte) (any, []byte, error) {
	v, big, rest, ok := Int(b)
	if !ok {
		return nil, nil, errNotRead
	}
	return intValue{v, big}, rest, nil
}

// refInt reads an int (ReadInt64Bytes) or a uint (ReadUint64Bytes, a value
// above the int64 range reported as such, at math.MaxInt64) with the
// reference.
func refInt(b []byte) (any, []byte, error) {
	switch ref.NextType(b) {
	case ref.IntType:
		if v, rest, err := ref.ReadInt64Bytes(b); err == nil {
			return intValue{v, false}, rest, nil
		}
	case ref.UintType:
		if u, rest, err := ref.ReadUint64Bytes(b); err == nil && u > math.MaxInt64 {
			return intValue{math.MaxInt64, true}, rest, nil
		} else if err == nil {
			return intValue{int64(u), false}, rest, nil
		}
	}
	return nil, nil, errNotRead
}
