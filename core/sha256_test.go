package core

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// TestSHA256 checks sha256Sum against crypto/sha256 on every length up to
// four blocks (all padding cases) with headers of 0 to 5 bytes, and on
// random longer inputs.
func TestSHA256(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	check := func(hdr, d []byte) {
		want := sha256.Sum256(append(append([]byte(nil), hdr...), d...))
		if got := sha256Sum(hdr, d); got != want {
			t.Fatalf("sha256Sum(%d-byte header, %d bytes) = %x, want %x", len(hdr), len(d), got, want)
		}
	}
	for h := 0; h <= 5; h++ {
		for n := 0; n <= 260; n++ {
			check(data[:h], data[h:h+n])
		}
	}
	for range 200 {
		h := r.IntN(6)
		check(data[:h], data[h:h+r.IntN(len(data)-h)])
	}
}

// TestPrefixDigestsCache calls prefixDigests in sequences that hit and miss
// its one-entry cache (same bytes; same length, other bytes; same bytes,
// other counts or offsets) and checks every answer against crypto/sha256.
func TestPrefixDigestsCache(t *testing.T) {
	want := func(enc []byte, ends, counts [3]int) [3]string {
		var d [3]string
		for k := range 3 {
			h := sha256.Sum256(append(appendArrayHeader(nil, counts[k]), enc[:ends[k]]...))
			d[k] = hex.EncodeToString(h[:])
		}
		return d
	}
	a := []byte("abcdefghijklmnopqrstuvwxyz0123456789")
	b := []byte("abcdefghijklmnopqrstuvwxyz0123456788")
	cases := []struct {
		enc          []byte
		ends, counts [3]int
	}{
		{a, [3]int{5, 20, 30}, [3]int{1, 2, 3}},
		{a, [3]int{5, 20, 30}, [3]int{1, 2, 3}},
		{b, [3]int{5, 20, 36}, [3]int{1, 2, 3}},
		{a, [3]int{5, 20, 36}, [3]int{1, 2, 3}},
		{a, [3]int{5, 20, 36}, [3]int{1, 2, 4}},
		{a, [3]int{5, 21, 36}, [3]int{1, 2, 4}},
		{a, [3]int{5, 5, 36}, [3]int{1, 1, 4}},
		{a, [3]int{0, 0, 0}, [3]int{0, 0, 0}},
		{a, [3]int{5, 5, 36}, [3]int{1, 1, 4}},
	}
	for i, c := range cases {
		if got, w := prefixDigests(c.enc, c.ends, c.counts), want(c.enc, c.ends, c.counts); got != w {
			t.Fatalf("case %d: %v, want %v", i, got, w)
		}
	}
}
