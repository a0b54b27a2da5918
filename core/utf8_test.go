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
		if n, ok := utf8Count(c); ok && n != utf8.RuneCount(c) {
			t.Fatalf("utf8Count(%q) = %d, want %d", c, n, utf8.RuneCount(c))
		}
	}
}

func FuzzValidUTF8(f *testing.F) {
	f.Add([]byte("abcdefgh\xe2\x82\xac"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if validUTF8(b) != utf8.Valid(b) {
			t.Fatalf("validUTF8(%q) disagrees with utf8.Valid", b)
		}
		if n, ok := utf8Count(b); ok && n != utf8.RuneCount(b) {
			t.Fatalf("utf8Count(%q) = %d, want %d", b, n, utf8.RuneCount(b))
		}
	})
}

// TestUTF8CountExhaustive checks utf8Count against utf8.Valid on every
// sequence of up to three bytes and on four-byte sequences over the bytes
// that matter, each alone, after seven ASCII bytes, and followed by twelve
// (the word-at-a-time path).
func TestUTF8CountExhaustive(t *testing.T) {
	check1 := func(c []byte) {
		n, ok := utf8Count(c)
		if ok != utf8.Valid(c) || ok && n != utf8.RuneCount(c) {
			t.Fatalf("utf8Count(%q) = %d, %v; want %d, %v", c, n, ok, utf8.RuneCount(c), utf8.Valid(c))
		}
	}
	check := func(b []byte) {
		for _, pre := range [][]byte{nil, []byte("abcdefg")} {
			c := append(append([]byte(nil), pre...), b...)
			check1(c)
			check1(append(c, "abcdefghijkl"...)) // the word-at-a-time path
		}
	}
	for x := range 1 << 16 {
		check([]byte{byte(x >> 8), byte(x)})
		check([]byte{byte(x >> 8)})
	}
	edges := []byte{0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff}
	for x := 0xc0; x <= 0xff; x++ {
		for y := range 256 {
			for _, z := range edges {
				check([]byte{byte(x), byte(y), z})
				for _, w := range edges {
					check([]byte{byte(x), byte(y), z, w})
				}
			}
		}
	}
}
