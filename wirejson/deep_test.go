package wirejson_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/deepjson"
	"github.com/polyloop/assembly/wirejson"
)

// skipLen is the length of the msgpack value at the start of b, read with
// one count of the values still to pass (no recursion, any depth).
func skipLen(t testing.TB, b []byte) int {
	n := len(b)
	for left := 1; left > 0; left-- {
		var items uint32
		var err error
		switch msgp.NextType(b) {
		case msgp.MapType:
			items, b, err = msgp.ReadMapHeaderBytes(b)
			items *= 2
		case msgp.ArrayType:
			items, b, err = msgp.ReadArrayHeaderBytes(b)
		default:
			b, err = msgp.Skip(b)
		}
		if err != nil {
			t.Fatalf("the oracle's msgpack: %v", err)
		}
		left += int(items)
	}
	return n - len(b)
}

// standIns is the msgpack faithful with every map or array that opens past
// depth (the whole value at level 1) replaced by its stand-in: the empty
// one, or with padded one of its size (wirejson.AppendStandIn).
func standIns(t testing.TB, faithful []byte, depth int, padded bool) []byte {
	var out []byte
	b := faithful
	left := []uint32{1} // values still to read on each open level
	for len(left) > 0 {
		if left[len(left)-1] == 0 {
			left = left[:len(left)-1]
			continue
		}
		left[len(left)-1]--
		t0 := msgp.NextType(b)
		if t0 != msgp.MapType && t0 != msgp.ArrayType {
			n := skipLen(t, b)
			out, b = append(out, b[:n]...), b[n:]
			continue
		}
		if len(left) > depth {
			n := skipLen(t, b)
			switch {
			case padded:
				out = wirejson.AppendStandIn(out, t0 == msgp.MapType, uint64(n))
			case t0 == msgp.MapType:
				out = append(out, 0x80)
			default:
				out = append(out, 0x90)
			}
			b = b[n:]
			continue
		}
		var items uint32
		rest := b
		if t0 == msgp.MapType {
			items, rest, _ = msgp.ReadMapHeaderBytes(b)
			items *= 2
		} else {
			items, rest, _ = msgp.ReadArrayHeaderBytes(b)
		}
		out, b = append(out, b[:len(b)-len(rest)]...), rest
		left = append(left, items)
	}
	return out
}

// faithfulReader converts text with no depth bound (every level written
// as it is: the reader as it was before the bound).
func faithfulReader(text []byte) ([]byte, error) {
	defer wirejson.SetFullDepth(math.MaxInt)()
	return wirejson.ToMsgpack(nil, text)
}

// checkDeep checks one generated request: the reader writes the oracle's
// msgpack with stand-ins past fullDepth (at their size when padded),
// and every caller answers it as the core answers the oracle's msgpack; then
// the same for texts broken in a few places, whose syntax error must be
// the one the faithful reader finds (and one encoding/json agrees is there,
// when it can read that deep).
func checkDeep(t *testing.T, r *rand.Rand, name string, v deepjson.Value, shallow bool) {
	t.Helper()
	d := wirejson.FullDepth()
	mp, err := wirejson.ToMsgpack(nil, v.JSON)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	over := core.RequestOverLimit(uint64(len(v.MP))) // then stand-ins at their size
	if want := standIns(t, v.MP, d, over); !bytes.Equal(mp, want) {
		t.Fatalf("%s: the msgpack is not the oracle's with stand-ins past %d:\n got  %.200x\n want %.200x", name, d, mp, want)
	}
	padded, err := wirejson.ToMsgpackPadded(nil, v.JSON)
	if want := standIns(t, v.MP, d, true); err != nil || !bytes.Equal(padded, want) || len(padded) != len(v.MP) {
		t.Fatalf("%s: padded: %v, %d bytes, the oracle's %d", name, err, len(padded), len(v.MP))
	}
	if err := deepjson.Check(v.JSON, v.MP); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for range 3 {
		b := breakText(r, v.JSON)
		_, err := wirejson.ToMsgpack(nil, b)
		want, werr := faithfulReader(b)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("%s broken (%d of %d bytes): %v; the faithful reader: %v", name, len(b), len(v.JSON), err, werr)
		}
		if shallow && json.Valid(b) != (err == nil) {
			t.Fatalf("%s broken: encoding/json says valid=%v, the reader %v", name, json.Valid(b), err)
		}
		if err == nil {
			if err := deepjson.Check(b, want); err != nil {
				t.Fatalf("%s broken, still valid: %v", name, err)
			}
		}
	}
}

// breakText changes text at one place (near its start, its end, or
// anywhere): cut there, or a byte replaced or put in.
func breakText(r *rand.Rand, text []byte) []byte {
	const junk = ",]}:[{\"\\ x0-.\x01\te"
	var i int
	switch r.IntN(3) {
	case 0:
		i = r.IntN(min(len(text), 40))
	case 1:
		i = len(text) - r.IntN(min(len(text), 40))
	default:
		i = r.IntN(len(text) + 1)
	}
	c := junk[r.IntN(len(junk))]
	switch r.IntN(3) {
	case 0:
		return text[:i]
	case 1:
		if i == len(text) {
			i--
		}
		b := bytes.Clone(text)
		b[i] = c
		return b
	}
	return append(append(bytes.Clone(text[:i]), c), text[i:]...)
}

// TestDeepJSONOneVerdict is the depth bound's differential: requests with
// deep values at every place the core reads (deepjson.Places), chains of
// seeded random arrays and objects (siblings of every kind, repeated keys,
// lone surrogates, invalid UTF-8, big integers, floats, header-size steps)
// ending just above, at and below the bound, are answered by every caller
// as the core answers the msgpack they say, built independently; broken
// texts get the faithful reader's syntax error. At the bound of the module
// (64) and at the shallowest bound that is sound (6: the core reads a
// value at depth 6 only by its first byte).
func TestDeepJSONOneVerdict(t *testing.T) {
	for _, depth := range []int{wirejson.FullDepth(), 6, 7} {
		restore := wirejson.SetFullDepth(depth)
		r := rand.New(rand.NewPCG(uint64(depth), 1))
		cases := 0
		for seed := range uint64(40 * len(deepjson.Places)) {
			pl := deepjson.Places[seed%uint64(len(deepjson.Places))]
			// the chain's levels start at pl.Level: its level depth+1-pl.Level
			// is the first past the bound
			n := max(0, depth-pl.Level-1+r.IntN(5))
			inner := deepjson.Scalars[r.IntN(len(deepjson.Scalars))]
			v := pl.Wrap(deepjson.Chain(n, deepjson.Random(seed), inner))
			checkDeep(t, r, pl.Name, v, true)
			cases++
		}
		restore()
		t.Logf("bound %d: %d requests, 3 broken texts each", depth, cases)
	}
}

// TestDeepJSONVeryDeep: a million levels of arrays and of objects (at two
// places; 100,000 at two more), 100,000 random levels, and a level of 65,535 to 65,537 members past the bound
// (the header sizes), at a few places.
func TestDeepJSONVeryDeep(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, pl := range deepjson.Places {
		if !slices.Contains([]string{"top", "first-key", "steps", "recorded-text"}, pl.Name) {
			continue
		}
		n := 100_000
		if pl.Name == "top" || pl.Name == "steps" {
			n = 1_000_000
		}
		checkDeep(t, r, pl.Name+"/arrays", pl.Wrap(deepjson.Chain(n, deepjson.Arrays, deepjson.Int(1))), false)
		checkDeep(t, r, pl.Name+"/objects", pl.Wrap(deepjson.Chain(n, deepjson.Objects, deepjson.Int(1))), false)
		checkDeep(t, r, pl.Name+"/random", pl.Wrap(deepjson.Chain(100_000, deepjson.Random(uint64(len(pl.Name))), deepjson.Int(1))), false)
		for _, n := range []int{15, 16, 65535, 65536, 65537} {
			x := deepjson.Chain(100, deepjson.Arrays, deepjson.Chain(2, deepjson.Wide(n), deepjson.Str("x")))
			checkDeep(t, r, pl.Name+"/wide", pl.Wrap(x), true)
		}
	}
}

// TestDeepJSONTooShallowIsCaught: the differential has teeth: with the bound
// at 4, above the levels the core reads, requests with a deep value where
// the core reads level 5 (a content block, an injection) get other answers
// from assemble_json than the core gives the msgpack they say.
func TestDeepJSONTooShallowIsCaught(t *testing.T) {
	defer wirejson.SetFullDepth(4)()
	var differ []string
	for _, pl := range deepjson.Places {
		v := pl.Wrap(deepjson.Chain(3, deepjson.Objects, deepjson.Str("t")))
		if !bytes.Equal(wirejson.AppendAssemble(nil, v.JSON), core.AppendAssembleBytes(nil, v.MP)) {
			differ = append(differ, pl.Name)
		}
	}
	if len(differ) == 0 {
		t.Fatal("at a bound of 4 every place still gets the core's verdict: the differential cannot see a bound too shallow")
	}
	t.Logf("at a bound of 4, %d of %d places get another answer: %s", len(differ), len(deepjson.Places), strings.Join(differ, ", "))
}

// TestDeepJSONMemory: reading deep text allocates little more than the
// msgpack's room (1⅛ bytes per byte of text, reserved once): at most 1½
// bytes per byte of text for 10 MB of '[', of {"a": and of arrays opened
// and closed in a request.
func TestDeepJSONMemory(t *testing.T) {
	const n = 10 << 20
	texts := map[string][]byte{
		"[":              bytes.Repeat([]byte("["), n),
		`{"a":`:          bytes.Repeat([]byte(`{"a":`), n/5),
		"[...] in steps": []byte(`{"observation_template":"{observation}","steps":[` + strings.Repeat("[", n/2) + strings.Repeat("]", n/2) + "]}"),
		"[0,[0,...]]":    []byte(strings.Repeat("[0,", n/4) + "0" + strings.Repeat("]", n/4)),
	}
	for name, text := range texts {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := wirejson.ToMsgpack(nil, text)
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		if limit := uint64(len(text)) * 3 / 2; alloc > limit {
			t.Errorf("%s: %d bytes of text: %d bytes allocated (%.2f per byte), over %d", name, len(text), alloc, float64(alloc)/float64(len(text)), limit)
		}
		t.Logf("%-15s %d bytes: %.3f bytes allocated per byte (%v)", name, len(text), float64(alloc)/float64(len(text)), err)
	}
}
