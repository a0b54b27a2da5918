package msgp

import "strconv"

// The errors of the readers, each with tinylib/msgp's text (the core passes
// some of them on: wirejson.FromMsgpack's errors, which the command-line
// tool prints).
var (
	// ErrShortBytes: the bytes end inside the value.
	ErrShortBytes error = errShort{}
	// ErrRecursion: Skip or ReadIntfBytes met values nested too deeply.
	ErrRecursion error = errRecursion{}
)

// recursionLimit is the nesting at which Skip and ReadIntfBytes stop, as
// tinylib/msgp's do.
const recursionLimit = 100000

type errShort struct{}

func (errShort) Error() string { return "msgp: too few bytes left to read object" }

type errRecursion struct{}

func (errRecursion) Error() string { return "msgp: recursion limit reached" }

// TypeError: the value is of type Encoded where a reader of Method was
// called.
type TypeError struct {
	Method  Type
	Encoded Type
}

func (t TypeError) Error() string {
	return "msgp: attempted to decode type " + strconv.Quote(t.Encoded.String()) + " with method for " + strconv.Quote(t.Method.String())
}

// InvalidPrefixError: the value starts with a byte no msgpack value starts
// with (0xc1).
type InvalidPrefixError byte

func (i InvalidPrefixError) Error() string {
	return "msgp: unrecognized type prefix 0x" + strconv.FormatInt(int64(i), 16)
}

// badPrefix is the error of a reader of want given a value starting lead.
func badPrefix(want Type, lead byte) error {
	t := specs[lead].typ
	if t == InvalidType {
		return InvalidPrefixError(lead)
	}
	return TypeError{Method: want, Encoded: t}
}

// UintOverflow: ReadInt64Bytes met a uint64 above the int64 range.
type UintOverflow struct {
	Value         uint64
	FailedBitsize int
}

func (u UintOverflow) Error() string {
	return "msgp: " + strconv.FormatUint(u.Value, 10) + " overflows uint" + strconv.Itoa(u.FailedBitsize)
}

// UintBelowZero: ReadUint64Bytes met a negative int.
type UintBelowZero struct{ Value int64 }

func (u UintBelowZero) Error() string {
	return "msgp: attempted to cast int " + strconv.FormatInt(u.Value, 10) + " to unsigned"
}

// ExtensionTypeError: an ext value of type Got where Want was read.
type ExtensionTypeError struct{ Got, Want int8 }

func (e ExtensionTypeError) Error() string {
	return "msgp: error decoding extension: wanted type " + strconv.Itoa(int(e.Want)) + "; got type " + strconv.Itoa(int(e.Got))
}

// InvalidTimestamp: a timestamp ext value (type -1) of a wrong length or
// with nanoseconds over 999,999,999.
type InvalidTimestamp struct {
	Nanos       int64
	FieldLength int
}

func (u InvalidTimestamp) Error() string {
	if u.Nanos > 0 {
		return "msgp: timestamp nanosecond field value " + strconv.FormatInt(u.Nanos, 10) + " exceeds maximum allows of 999999999"
	}
	if u.FieldLength >= 0 {
		return "msgp: invalid timestamp field length " + strconv.Itoa(u.FieldLength) + " - must be 4, 8 or 12"
	}
	return ""
}
