package msgp

// Every function of this package against its namesake in tinylib/msgp, the
// reference: writers over every length and integer boundary, readers over a
// corpus of values (canonical and not, every type, every length boundary)
// cut at every prefix length and followed by more bytes, over every input
// of one and two bytes, and over random bytes. The one difference is
// meant: a timestamp ext is a time.Time there and its *RawExtension here.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	ref "github.com/tinylib/msgp/msgp"
)

// lengths are the str, bin, array and map lengths around every boundary of
// the formats: fix (≤ 15 or ≤ 31), 8-bit, 16-bit and 32-bit lengths.
var lengths = func() []int {
	var l []int
	for n := range 34 {
		l = append(l, n)
	}
	return append(l, 127, 128, 254, 255, 256, 257, 65534, 65535, 65536, 65537)
}()

// ints are the integers around every boundary of the int formats.
var ints = func() []int64 {
	var v []int64
	for _, e := range []int64{0, 31, 32, 127, 128, 255, 256, 32767, 32768, 65535, 65536,
		1<<31 - 1, 1 << 31, 1<<32 - 1, 1 << 32, 1<<53 - 1, 1 << 53, math.MaxInt64 - 1} {
		for d := int64(-1); d <= 1; d++ {
			v = append(v, e+d, -(e + d))
		}
	}
	return append(v, math.MaxInt64, math.MinInt64, math.MinInt64+1)
}()

func TestWritersMatchReference(t *testing.T) {
	for _, pre := range [][]byte{nil, []byte("pre"), make([]byte, 3, 4)} {
		check := func(what string, got, want []byte) {
			t.Helper()
			if !bytes.Equal(got, want) {
				t.Fatalf("%s after %q: %x, reference %x", what, pre, got, want)
			}
		}
		for _, n := range append(lengths, 1<<32-1, 1<<32-2, 1<<31) {
			sz := uint32(n)
			check(fmt.Sprint("AppendMapHeader ", sz), AppendMapHeader(clone(pre), sz), ref.AppendMapHeader(clone(pre), sz))
			check(fmt.Sprint("AppendArrayHeader ", sz), AppendArrayHeader(clone(pre), sz), ref.AppendArrayHeader(clone(pre), sz))
		}
		for _, n := range lengths {
			s := strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
			check(fmt.Sprint("AppendString of ", n, " bytes"), AppendString(clone(pre), s), ref.AppendString(clone(pre), s))
		}
		for _, i := range ints {
			check(fmt.Sprint("AppendInt64 ", i), AppendInt64(clone(pre), i), ref.AppendInt64(clone(pre), i))
			check(fmt.Sprint("AppendUint64 ", uint64(i)), AppendUint64(clone(pre), uint64(i)), ref.AppendUint64(clone(pre), uint64(i)))
		}
		for _, f := range floats {
			check(fmt.Sprint("AppendFloat64 ", f), AppendFloat64(clone(pre), f), ref.AppendFloat64(clone(pre), f))
		}
	}
}

// TestAppendStringLong checks the str32 form, whose string is too long to
// try at many lengths.
func TestAppendStringLong(t *testing.T) {
	s := strings.Repeat("a", 1<<16+3)
	if got, want := AppendString(nil, s), ref.AppendString(nil, s); !bytes.Equal(got, want) {
		t.Fatalf("AppendString of %d bytes differs from the reference", len(s))
	}
}

var floats = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e300, -1e-300, math.MaxFloat64, math.SmallestNonzeroFloat64,
	math.Inf(1), math.Inf(-1), math.NaN(), float64(math.MaxFloat32), 1.5}

func clone(b []byte) []byte { return append(b[:len(b):len(b)], nil...) }

// reader is a reader and its reference, each giving (value, rest, error).
type reader struct {
	name     string
	got, ref func([]byte) (any, []byte, error)
}

// readers pairs each reader with its reference (fast_test.go adds the
// readers of fast.go).
var readers = []reader{
	{"ReadMapHeaderBytes", wrap(ReadMapHeaderBytes), wrap(ref.ReadMapHeaderBytes)},
	{"ReadArrayHeaderBytes", wrap(ReadArrayHeaderBytes), wrap(ref.ReadArrayHeaderBytes)},
	{"ReadStringZC", wrap(ReadStringZC), wrap(ref.ReadStringZC)},
	{"ReadStringBytes", wrap(ReadStringBytes), wrap(ref.ReadStringBytes)},
	{"ReadBytesZC", wrap(ReadBytesZC), wrap(ref.ReadBytesZC)},
	{"ReadBoolBytes", wrap(ReadBoolBytes), wrap(ref.ReadBoolBytes)},
	{"ReadFloat64Bytes", wrap(ReadFloat64Bytes), wrap(ref.ReadFloat64Bytes)},
	{"ReadInt64Bytes", wrap(ReadInt64Bytes), wrap(ref.ReadInt64Bytes)},
	{"ReadUint64Bytes", wrap(ReadUint64Bytes), wrap(ref.ReadUint64Bytes)},
	{"ReadIntfBytes", ReadIntfBytes, ref.ReadIntfBytes},
	{"ReadNilBytes", wrap0(ReadNilBytes), wrap0(ref.ReadNilBytes)},
	{"Skip", wrap0(Skip), wrap0(ref.Skip)},
	{"NextType", func(b []byte) (any, []byte, error) {
		return NextType(b).String() + fmt.Sprint(byte(NextType(b))), nil, nil
	},
		func(b []byte) (any, []byte, error) {
			return ref.NextType(b).String() + fmt.Sprint(byte(ref.NextType(b))), nil, nil
		}},
}

func wrap[T any](f func([]byte) (T, []byte, error)) func([]byte) (any, []byte, error) {
	return func(b []byte) (any, []byte, error) { v, o, err := f(b); return v, o, err }
}

func wrap0(f func([]byte) ([]byte, error)) func([]byte) (any, []byte, error) {
	return func(b []byte) (any, []byte, error) { o, err := f(b); return nil, o, err }
}

// same reports how (v, rest, err) differs from the reference's answer for
// the same input, or "".
func same(v any, r []byte, err error, rv any, rr []byte, rerr error) string {
	if fmt.Sprint(err) != fmt.Sprint(rerr) {
		return fmt.Sprintf("error %v, reference %v", err, rerr)
	}
	if !equal(v, rv) {
		return fmt.Sprintf("value %s, reference %s", show(v), show(rv))
	}
	if (r == nil) != (rr == nil) || len(r) != len(rr) {
		return fmt.Sprintf("%d bytes left (nil %v), reference %d (nil %v)", len(r), r == nil, len(rr), rr == nil)
	}
	return ""
}

// equal reports whether v, read here, is the reference's rv: the same Go
// type (the reference's *RawExtension for this package's), nil and empty
// apart, floats bit for bit, times the same instant in the same location.
func equal(v, rv any) bool {
	if x, ok := v.(*RawExtension); ok {
		if t, ok := rv.(time.Time); ok { // a timestamp (readTime)
			return x == nil && t.IsZero() || x != nil && (x.Type == 5 || x.Type == -1) && t.Equal(timeOf(x))
		}
		r, ok := rv.(*ref.RawExtension)
		return ok && x.Type == r.Type && (x.Data == nil) == (r.Data == nil) && bytes.Equal(x.Data, r.Data)
	}
	if reflect.TypeOf(v) != reflect.TypeOf(rv) {
		return false
	}
	switch x := v.(type) {
	case []any:
		r := rv.([]any)
		if (x == nil) != (r == nil) || len(x) != len(r) {
			return false
		}
		for i := range x {
			if !equal(x[i], r[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		r := rv.(map[string]any)
		if (x == nil) != (r == nil) || len(x) != len(r) {
			return false
		}
		for k, e := range x {
			if re, ok := r[k]; !ok || !equal(e, re) {
				return false
			}
		}
		return true
	case []byte:
		r := rv.([]byte)
		return (x == nil) == (r == nil) && bytes.Equal(x, r)
	case float64:
		return math.Float64bits(x) == math.Float64bits(rv.(float64))
	case float32:
		return math.Float32bits(x) == math.Float32bits(rv.(float32))
	case complex64, complex128:
		return fmt.Sprint(v) == fmt.Sprint(rv)
	case time.Time:
		r := rv.(time.Time)
		return x.Equal(r) && x.Location() == r.Location()
	}
	return v == rv
}

// timeOf is the instant of a timestamp ext that readTime accepted: type 5
// is tinylib/msgp's (seconds, nanoseconds), type -1 msgpack's timestamp 32,
// 64 or 96.
func timeOf(x *RawExtension) time.Time {
	d := x.Data
	switch {
	case x.Type == 5:
		return time.Unix(int64(binary.BigEndian.Uint64(d)), int64(int32(binary.BigEndian.Uint32(d[8:]))))
	case len(d) == 4:
		return time.Unix(int64(binary.BigEndian.Uint32(d)), 0)
	case len(d) == 8:
		v := binary.BigEndian.Uint64(d)
		return time.Unix(int64(v&(1<<34-1)), int64(v>>34))
	}
	return time.Unix(int64(binary.BigEndian.Uint64(d[4:])), int64(binary.BigEndian.Uint32(d)))
}

// show prints a value in full (%#v: nil and empty differ, map keys sorted),
// the reference's *RawExtension as this package's.
func show(v any) string {
	switch x := v.(type) {
	case *ref.RawExtension:
		return fmt.Sprintf("ext %d %#v", x.Type, x.Data)
	case *RawExtension:
		return fmt.Sprintf("ext %d %#v", x.Type, x.Data)
	case []any:
		if x == nil {
			return "[]any(nil)"
		}
		s := make([]string, len(x))
		for i := range x {
			s[i] = show(x[i])
		}
		return "[" + strings.Join(s, ", ") + "]"
	case map[string]any:
		if x == nil {
			return "map(nil)"
		}
		s := make([]string, 0, len(x))
		for k, e := range x {
			s = append(s, fmt.Sprintf("%q: %s", k, show(e)))
		}
		slices.Sort(s)
		return "{" + strings.Join(s, ", ") + "}"
	case time.Time:
		return x.Format(time.RFC3339Nano) + " " + x.Location().String()
	}
	return fmt.Sprintf("%T %#v", v, v)
}

// compareAll runs every reader and its reference on b.
func compareAll(t *testing.T, b []byte) {
	t.Helper()
	for _, r := range readers {
		v, rest, err := r.got(b)
		rv, rrest, rerr := r.ref(b)
		if d := same(v, rest, err, rv, rrest, rerr); d != "" {
			t.Fatalf("%s(%x): %s", r.name, trim(b), d)
		}
	}
}

func trim(b []byte) []byte {
	if len(b) > 48 {
		return b[:48]
	}
	return b
}

// corpus is one value of every type and form at every length boundary,
// canonical and not.
func corpus() [][]byte {
	var c [][]byte
	add := func(b ...[]byte) { c = append(c, b...) }
	for _, n := range lengths {
		s := strings.Repeat("k", n)
		add(ref.AppendString(nil, s), ref.AppendBytes(nil, []byte(s)))
		add(longForms(0xd9, n, s), longForms(0xc4, n, s)) // str8/16/32, bin8/16/32 of a short value
		// containers at the 16-bit boundary only: 2^16 pairs are slow to read
		if n < 65534 || n == 65535 || n == 65536 {
			add(container(ref.AppendMapHeader(nil, uint32(n)), 2*n), container(ref.AppendArrayHeader(nil, uint32(n)), n))
		}
		if n < 256 { // the 16- and 32-bit forms of a short container
			add(container(append([]byte{0xde}, be(2, n)...), 2*n), container(append([]byte{0xdf}, be(4, n)...), 2*n))
			add(container(append([]byte{0xdc}, be(2, n)...), n), container(append([]byte{0xdd}, be(4, n)...), n))
		}
	}
	for _, h := range []byte{0xdb, 0xc6, 0xdd, 0xdf, 0xc9} { // a 32-bit length of 2^32-1, the bytes absent
		add([]byte{h, 0xff, 0xff, 0xff, 0xff, 0xc0, 0xc0})
	}
	for _, i := range ints {
		add(ref.AppendInt64(nil, i), ref.AppendUint64(nil, uint64(i)))
		for _, lead := range []byte{0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3} { // every width
			w := 1 << ((lead - 0xcc) & 3)
			add(append([]byte{lead}, be(8, int(i))[8-w:]...))
		}
	}
	for _, f := range floats {
		add(ref.AppendFloat64(nil, f), ref.AppendFloat32(nil, float32(f)))
	}
	add([]byte{0xc0}, []byte{0xc1}, []byte{0xc2}, []byte{0xc3})
	add(exts()...)
	add(nested()...)
	return c
}

// be is n in k big-endian bytes.
func be(k, n int) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(n))
	return b[8-k:]
}

// longForms writes s with the 8-, 16- and 32-bit length forms of the str
// (lead 0xd9) or bin (0xc4) family, one after the other.
func longForms(lead byte, n int, s string) []byte {
	var b []byte
	for k, w := range []int{1, 2, 4} {
		b = append(append(append(b, lead+byte(k)), be(w, n)...), s...)
	}
	return b
}

// container appends n values of assorted types after header h, a str key
// before each odd one for a map.
func container(h []byte, n int) []byte {
	for i := range n {
		switch i % 4 {
		case 0:
			h = ref.AppendString(h, fmt.Sprint("k", i))
		case 1:
			h = ref.AppendInt64(h, int64(-i))
		case 2:
			h = ref.AppendBytes(h, []byte{byte(i)})
		default:
			h = ref.AppendMapHeader(h, 0)
		}
	}
	return h
}

// exts are ext values of every form, of tinylib/msgp's own types (3, 4, 5,
// -1) and others, at data lengths around each form's.
func exts() [][]byte {
	var c [][]byte
	types := []int8{0, 1, 3, 4, 5, -1, -2, 127, -128}
	for _, typ := range types {
		for k, n := range []int{1, 2, 4, 8, 16} { // fixext
			c = append(c, append([]byte{0xd4 + byte(k), byte(typ)}, data(n)...))
		}
		for _, n := range []int{0, 1, 4, 8, 12, 13, 16, 255, 256} {
			c = append(c, append([]byte{0xc7, byte(n), byte(typ)}, data(n)...))
			c = append(c, append(append(append([]byte{0xc8}, be(2, n)...), byte(typ)), data(n)...))
			c = append(c, append(append(append([]byte{0xc9}, be(4, n)...), byte(typ)), data(n)...))
		}
	}
	// timestamps whose nanoseconds are over 999,999,999 (8 and 12 bytes)
	c = append(c, []byte{0xd7, 0xff, 0xff, 0xff, 0xff, 0xfc, 0, 0, 0, 1})
	c = append(c, []byte{0xc7, 12, 0xff, 0x3b, 0x9a, 0xca, 0x00, 0, 0, 0, 0, 0, 0, 0, 1})
	c = append(c, ref.AppendTime(nil, time.Unix(1700000000, 123456789)))
	c = append(c, ref.AppendComplex64(nil, complex(1.5, -2)), ref.AppendComplex128(nil, complex(-1e300, 3)))
	return c
}

func data(n int) []byte {
	d := make([]byte, n)
	for i := range d {
		d[i] = byte(0x11 * (i + 1))
	}
	return d
}

// nested are containers within containers, with str and bin keys, a key of
// another type, and a map whose header claims more than the bytes hold.
func nested() [][]byte {
	inner := ref.AppendString(ref.AppendMapHeader(nil, 1), "a")
	inner = ref.AppendArrayHeader(inner, 2)
	inner = ref.AppendFloat32(ref.AppendNil(inner), 2.5)
	m := ref.AppendMapHeader(nil, 3)
	m = append(ref.AppendString(m, "x"), inner...)
	m = ref.AppendTime(ref.AppendBytes(m, []byte("binkey")), time.Unix(5, 6))
	m = ref.AppendBool(ref.AppendString(m, ""), true)
	intKey := ref.AppendInt64(ref.AppendInt64(ref.AppendMapHeader(nil, 1), 1), 2)
	return [][]byte{inner, m, intKey, {0x8f, 0xa0, 0xc0}, {0xde, 0xff, 0xff}, {0xdc, 0x00, 0x20, 0xc0}}
}

// TestReadersMatchReference: every corpus value, cut at every prefix length
// and followed by bytes, read by every reader.
func TestReadersMatchReference(t *testing.T) {
	for _, v := range corpus() {
		for _, n := range prefixLengths(len(v)) {
			compareAll(t, v[:n])
		}
		compareAll(t, append(clone(v), 0xc0, 0x01))
	}
}

// prefixLengths is every length 0..n for a short value, else the lengths
// near each end (where the heads and the last values are) and a few between.
func prefixLengths(n int) []int {
	var l []int
	for k := 0; k <= n; k++ {
		if n <= 600 || k < 12 || n-k < 12 || k%16411 == 0 {
			l = append(l, k)
		}
	}
	return l
}

// TestReadersEveryShortInput: every input of one and two bytes.
func TestReadersEveryShortInput(t *testing.T) {
	compareAll(t, nil)
	compareAll(t, []byte{})
	for a := range 256 {
		compareAll(t, []byte{byte(a)})
		for b := range 256 {
			compareAll(t, []byte{byte(a), byte(b)})
		}
	}
}

// TestReadersRandomInput: random bytes, biased to the lead bytes of
// containers, strs and exts so the values go past their heads.
func TestReadersRandomInput(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	leads := []byte{0x81, 0x82, 0x92, 0xa3, 0xd9, 0xc7, 0xd4, 0xd7, 0xd6, 0xc4, 0xde, 0xdc, 0xcf, 0xd3, 0xcb, 0xca, 0xff, 0x05}
	for range 200000 {
		b := make([]byte, 1+r.IntN(24))
		for i := range b {
			if r.IntN(3) == 0 {
				b[i] = leads[r.IntN(len(leads))]
			} else {
				b[i] = byte(r.IntN(256))
			}
		}
		if r.IntN(8) == 0 && len(b) > 2 { // a small length after a long-form lead
			b[1], b[2] = 0, byte(r.IntN(8))
		}
		compareAll(t, b)
	}
}

// TestRecursionLimit: Skip and ReadIntfBytes stop at the same depth as the
// reference, for arrays and maps nested just below and just past it.
func TestRecursionLimit(t *testing.T) {
	for _, depth := range []int{recursionLimit - 1, recursionLimit, recursionLimit + 1} {
		for _, open := range [][]byte{{0x91}, {0x81, 0xa0}} {
			b := append(bytes.Repeat(open, depth), 0xc0)
			for _, r := range readers {
				if r.name != "Skip" && r.name != "ReadIntfBytes" {
					continue
				}
				v, rest, err := r.got(b)
				rv, rrest, rerr := r.ref(b)
				if fmt.Sprint(err) != fmt.Sprint(rerr) || len(rest) != len(rrest) || (v == nil) != (rv == nil) {
					t.Fatalf("%s at depth %d (%x): %v, %d left; reference %v, %d left", r.name, depth, open, err, len(rest), rerr, len(rrest))
				}
			}
		}
	}
}

// TestTypeStrings: every Type's name and number, as the reference's (the
// error texts quote them).
func TestTypeStrings(t *testing.T) {
	for i := range 256 {
		if got, want := Type(i).String(), ref.Type(i).String(); got != want {
			t.Fatalf("Type(%d) is %q, reference %q", i, got, want)
		}
	}
	pairs := [][2]byte{{byte(InvalidType), byte(ref.InvalidType)}, {byte(StrType), byte(ref.StrType)}, {byte(BinType), byte(ref.BinType)},
		{byte(MapType), byte(ref.MapType)}, {byte(ArrayType), byte(ref.ArrayType)}, {byte(Float64Type), byte(ref.Float64Type)},
		{byte(Float32Type), byte(ref.Float32Type)}, {byte(BoolType), byte(ref.BoolType)}, {byte(IntType), byte(ref.IntType)},
		{byte(UintType), byte(ref.UintType)}, {byte(NilType), byte(ref.NilType)}, {byte(DurationType), byte(ref.DurationType)},
		{byte(ExtensionType), byte(ref.ExtensionType)}, {byte(Complex64Type), byte(ref.Complex64Type)},
		{byte(Complex128Type), byte(ref.Complex128Type)}, {byte(TimeType), byte(ref.TimeType)}, {byte(NumberType), byte(ref.NumberType)}}
	for _, p := range pairs {
		if p[0] != p[1] {
			t.Fatalf("a Type numbered %d here is %d in the reference", p[0], p[1])
		}
	}
}
