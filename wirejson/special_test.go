package wirejson

import (
	"encoding/binary"
	"math/bits"
	"testing"
)

// firstSpecial is the byte-at-a-time rule special stands for: the index of
// the first '"', '\\' or control byte of w, or 8.
func firstSpecial(w []byte) int {
	for i, c := range w {
		if c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return 8
}

// TestSpecialEveryByteAtEveryPosition: the word test names the same first
// byte as the byte test for every byte value at every position of a word of
// plain bytes.
func TestSpecialEveryByteAtEveryPosition(t *testing.T) {
	for pos := range 8 {
		for c := range 256 {
			var w [8]byte
			for i := range w {
				w[i] = 'a' + byte(i)
			}
			w[pos] = byte(c)
			checkSpecial(t, w)
		}
	}
}

// TestSpecialEveryMix: words of bytes at and around the edges of the test
// (borrows out of one byte into the next are where a word test goes wrong),
// every combination: the lowest set bit still names the first special byte.
func TestSpecialEveryMix(t *testing.T) {
	edge := []byte{0x00, 0x01, 0x1f, 0x20, '"', '\\', 0x80}
	var w [8]byte
	var rec func(i int)
	rec = func(i int) {
		if t.Failed() {
			return
		}
		if i == len(w) {
			checkSpecial(t, w)
			return
		}
		for _, c := range edge {
			w[i] = c
			rec(i + 1)
		}
	}
	rec(0)
}

func checkSpecial(t *testing.T, w [8]byte) {
	t.Helper()
	got := 8
	if m := special(binary.LittleEndian.Uint64(w[:])); m != 0 {
		got = bits.TrailingZeros64(m) >> 3
	}
	if want := firstSpecial(w[:]); got != want {
		t.Fatalf("word % x: special names byte %d, want %d", w, got, want)
	}
}
