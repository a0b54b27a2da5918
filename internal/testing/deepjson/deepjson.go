// Package deepjson builds JSON texts nested deep, each with the msgpack it
// says written by tinylib/msgp (not by the JSON reader), and checks that
// every caller of the JSON reader answers such a text as the core answers
// that msgpack: the oracle of the reader's depth bound (wirejson,
// docs/SPEC.md §2.3). Deep msgpack is fine in the core, so the oracle holds
// at any depth.
package deepjson

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tinylib/msgp/msgp"
)

// Value is a JSON text and the msgpack it says.
type Value struct{ JSON, MP []byte }

// Member is a member of an object (Key and Val) or of an array (Val).
type Member struct{ Key, Val Value }

// Str is the JSON string of s, escaped as JSON allows (quotes, backslashes
// and controls; other bytes as they are, invalid UTF-8 included).
func Str(s string) Value {
	j := []byte{'"'}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			j = append(j, '\\', c)
		case c < 0x20:
			j = append(j, `\u00`...)
			j = append(j, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		default:
			j = append(j, c)
		}
	}
	return Value{append(j, '"'), msgp.AppendString(nil, s)}
}

// Esc is a JSON string written with the escapes given (json, its text
// between the quotes) that says the bytes s.
func Esc(json, s string) Value {
	return Value{[]byte(`"` + json + `"`), msgp.AppendString(nil, s)}
}

// Int is the JSON integer v, canonical in msgpack: unsigned when not
// negative.
func Int(v int64) Value {
	if v >= 0 {
		return Value{[]byte(strconv.FormatInt(v, 10)), msgp.AppendUint64(nil, uint64(v))}
	}
	return Value{[]byte(strconv.FormatInt(v, 10)), msgp.AppendInt64(nil, v)}
}

// Num is a JSON number that msgpack carries as the float64 f (a fraction
// or an exponent).
func Num(json string, f float64) Value {
	return Value{[]byte(json), msgp.AppendFloat64(nil, f)}
}

// BigInt is a JSON integer beyond 64 bits: ext 3 (abi.ExtBigInt) holding
// its text, written with the msgp library.
func BigInt(json string) Value {
	mp, err := msgp.AppendExtension(nil, &msgp.RawExtension{Type: 3, Data: []byte(json)})
	if err != nil {
		panic(err)
	}
	return Value{[]byte(json), mp}
}

// Obj is the object of the members, in order (a repeated key stays).
func Obj(ms ...Member) Value {
	v := Value{[]byte{'{'}, msgp.AppendMapHeader(nil, uint32(len(ms)))}
	for i, m := range ms {
		if i > 0 {
			v.JSON = append(v.JSON, ',')
		}
		v.JSON = append(append(append(v.JSON, m.Key.JSON...), ':'), m.Val.JSON...)
		v.MP = append(append(v.MP, m.Key.MP...), m.Val.MP...)
	}
	v.JSON = append(v.JSON, '}')
	return v
}

// Arr is the array of the values.
func Arr(vs ...Value) Value {
	v := Value{[]byte{'['}, msgp.AppendArrayHeader(nil, uint32(len(vs)))}
	for i, e := range vs {
		if i > 0 {
			v.JSON = append(v.JSON, ',')
		}
		v.JSON, v.MP = append(v.JSON, e.JSON...), append(v.MP, e.MP...)
	}
	v.JSON = append(v.JSON, ']')
	return v
}

// M is the member key: val.
func M(key string, val Value) Member { return Member{Str(key), val} }

// Lit is true, false or null.
func Lit(json string) Value {
	b := map[string]byte{"true": 0xc3, "false": 0xc2, "null": 0xc0}[json]
	return Value{[]byte(json), []byte{b}}
}

// Scalars are the values the chains are made of: integers at each of
// msgpack's size steps, an integer past 64 bits (ext 3) and numbers with
// fractions or exponents (floats), strings at each header step, escaped, with a lone
// surrogate (its three-byte form) or raw invalid UTF-8, the literals, empty
// and small containers, and an object with a repeated key.
var Scalars = []Value{
	Int(0), Int(-1), Int(127), Int(128), Int(65536), Int(-129), Int(-1 << 63),
	{[]byte("18446744073709551615"), msgp.AppendUint64(nil, 1<<64-1)},
	BigInt("18446744073709551616"), Num("1.5", 1.5), Num("1e0", 1), Num("-2E-1", -0.2),
	Num("1e400", posInf()), {[]byte("-0"), []byte{0}},
	Str(""), Str("a"), Str(strings.Repeat("x", 31)), Str(strings.Repeat("y", 32)), Str(strings.Repeat("z", 256)),
	Str(strings.Repeat("w", 65536)), Esc(`\n\u00e9\ud83d\ude00\/`, "\né😀/"), Esc(`a\ud800`, "a\xed\xa0\x80"),
	Str("b\xff"), Lit("true"), Lit("false"), Lit("null"),
	Arr(), Obj(), Arr(Int(1), Arr(Int(2), Arr())), Obj(M("a", Int(1)), M("a", Int(2))),
}

func posInf() float64 { f, _ := strconv.ParseFloat("1e400", 64); return f }

// Keys are object keys the chains use: plain, empty, a field's name, long,
// escaped, with a lone surrogate, with raw invalid UTF-8.
var Keys = []Value{
	Str("a"), Str(""), Str("raw_output"), Str("content"), Str(strings.Repeat("k", 40)),
	Esc(`t\u0065xt`, "text"), Esc(`\udc00`, "\xed\xb0\x80"), Str("\xc3"),
}

// ValidUTF8 reports whether v's JSON text is valid UTF-8 (a compare
// request can carry it as a str).
func (v Value) ValidUTF8() bool { return utf8.Valid(v.JSON) }
