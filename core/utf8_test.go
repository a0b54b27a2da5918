package core

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

func TestCountRunes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pool := []rune("aé漢😀\x00\u0301\U0010ffff~\u07ff\u0800\uffff")
	for range 5000 {
		rs := make([]rune, r.IntN(70))
		for i := range rs {
			rs[i] = pool[r.IntN(len(pool))]
		}
		s := string(rs)
		if got, want := codePoints(s), utf8.RuneCountInString(s); got != want {
			t.Fatalf("codePoints(%q) = %d, want %d", s, got, want)
		}
	}
}
