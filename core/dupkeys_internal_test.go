package core

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"github.com/polyloop/assembly/core/msgp"
)

// appendKey appends key as a msgpack str in the form form (0: the
// shortest, 1: str8, 2: str16, 3: str32): the same key in any form is
// the same key.
func appendKey(b []byte, key string, form int) []byte {
	switch form {
	case 1:
		b = append(b, 0xd9, byte(len(key)))
	case 2:
		b = append(b, 0xda, byte(len(key)>>8), byte(len(key)))
	case 3:
		b = append(b, 0xdb, 0, 0, byte(len(key)>>8), byte(len(key)))
	default:
		return msgp.AppendString(b, key)
	}
	return append(b, key...)
}

// TestKeysSeenAgainstMap: the set's verdict on each key of a map is a Go
// map's (the oracle), the first key met again at its index, whatever the
// count the header gives (none, the true one, one too large), whatever
// the keys' forms, across the set's growth.
func TestKeysSeenAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		n := rng.IntN(3000) + 1
		alphabet := rng.IntN(4000) + 1 // small: duplicates come early
		var b []byte
		keys := make([]string, n)
		for i := range keys {
			keys[i] = "k" + strconv.Itoa(rng.IntN(alphabet))
			if rng.IntN(50) == 0 {
				keys[i] = ""
			}
			b = appendKey(b, keys[i], rng.IntN(4))
			b = append(b, 0xc0)
		}
		want := -1
		oracle := map[string]bool{}
		for i, k := range keys {
			if oracle[k] {
				want = i
				break
			}
			oracle[k] = true
		}
		hint := [...]uint32{0, uint32(n), uint32(n) + 1000, 1<<32 - 1}[round%4]
		seen := keysSeen{keys: hint}
		got, p := -1, b
		for i := range n {
			at := p
			k, rest, err := readKey(p)
			if err != nil {
				t.Fatal(err)
			}
			if !seen.add(k, at) {
				got = i
				break
			}
			p = rest[1:]
		}
		if got != want {
			t.Fatalf("round %d (%d keys of %d, header %d): first duplicate at %d, want %d", round, n, alphabet, hint, got, want)
		}
	}
}

// TestUsageKeysMemory: reading a usage object of many keys allocates a
// few bytes a key (the set of hashes: at most 16), not a map entry's
// 40 and more (the string map it replaced allocated about 70 a key here),
// so that 64 MB of usage is read in memory proportional to it on every
// engine (issue 44).
func TestUsageKeysMemory(t *testing.T) {
	const n = 200_000
	v := msgp.AppendMapHeader(nil, n)
	for i := range n {
		v = msgp.AppendString(v, "key"+strconv.Itoa(i))
		v = msgp.AppendInt64(v, int64(i))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rest, err := checkUsageValue(v, -1)
	runtime.ReadMemStats(&after)
	if err != nil || len(rest) != 0 {
		t.Fatalf("checkUsageValue: %v, %d bytes left", err, len(rest))
	}
	if perKey := float64(after.TotalAlloc-before.TotalAlloc) / n; perKey > 24 {
		t.Errorf("reading a usage object of %d keys allocated %.1f bytes a key; want at most 24", n, perKey)
	}
}

// TestKeysSeenLyingHeaders: maps whose headers claim 2^32 − 1 keys, nested
// 60 deep, each holding nine keys then the next, before 1 MB that is no
// key: the sets cost what their keys need, not what the headers claim
// (sized from the headers and the bytes after them, they took 8 MB a
// level: 480 MB for 1 MB of input).
func TestKeysSeenLyingHeaders(t *testing.T) {
	var v []byte
	for range 60 {
		v = append(v, 0xdf, 0xff, 0xff, 0xff, 0xff)
		for k := range 8 {
			v = append(msgp.AppendString(v, "k"+strconv.Itoa(k)), 0xc0)
		}
		v = msgp.AppendString(v, "next")
	}
	v = append(v, make([]byte, 1<<20)...)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := checkJSONValue(v, -1, false) // as export's options do for a body that cannot be skipped
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("no error for maps that lie")
	}
	if mb := float64(after.TotalAlloc-before.TotalAlloc) / (1 << 20); mb > 64 {
		t.Errorf("checking 1 MB of maps that claim 2^32 - 1 keys allocated %.0f MB; want at most 64", mb)
	}
}
