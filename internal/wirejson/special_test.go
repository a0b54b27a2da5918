package wirejson

import (
	"encoding/binary"
	"testing"
)

// TestSpecialEveryByteAtEveryPosition: the word test agrees with the byte
// test for every byte value at every position of a word of plain bytes.
func TestSpecialEveryByteAtEveryPosition(t *testing.T) {
	for pos := range 8 {
		for c := range 256 {
			var w [8]byte
			for i := range w {
				w[i] = 'a' + byte(i)
			}
			w[pos] = byte(c)
			want := c == '"' || c == '\\' || c < 0x20
			if got := special(binary.LittleEndian.Uint64(w[:])); got != want {
				t.Fatalf("byte %#x at %d: special %v, want %v", c, pos, got, want)
			}
		}
	}
}
