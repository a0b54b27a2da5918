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

func TestValidUTF8(t *testing.T) {
	cases := [][]byte{
		nil, []byte("abc"), []byte("abcdefgh\xffabc"), []byte("abcdefghé"), []byte("\xed\xa0\x80"),
		[]byte("\xc0\x80"), []byte("\xf4\x90\x80\x80"), []byte("aaaaaaaaaaaaaaaa\xe2\x82"), []byte("€€€€€€€€€€x"),
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			switch r.IntN(4) {
			case 0:
				b[i] = byte(r.IntN(256))
			default:
				b[i] = "aé漢😀\xed\xa0"[r.IntN(12)]
			}
		}
		cases = append(cases, b)
	}
	for _, c := range cases {
		if got, want := validUTF8(c), utf8.Valid(c); got != want {
			t.Fatalf("validUTF8(%q) = %v, want %v", c, got, want)
		}
	}
}

func FuzzValidUTF8(f *testing.F) {
	f.Add([]byte("abcdefgh\xe2\x82\xac"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if validUTF8(b) != utf8.Valid(b) {
			t.Fatalf("validUTF8(%q) disagrees with utf8.Valid", b)
		}
	})
}
