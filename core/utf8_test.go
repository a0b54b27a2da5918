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

// TestUTF8CountExhaustive checks utf8Count against utf8.Valid and
// utf8.RuneCount on every case of utf8Cases at every placement of
// utf8Placements: each case at each of the eight byte offsets of the word in
// the first and in the second step of the unrolled loop, in the
// word-at-a-time loop, its byte path and the byte-by-byte tail, with the end
// of the buffer at every distance from the case up to where the unrolled loop
// takes it (docs/SPEC.md §2). The same test runs compiled to WebAssembly under
// wazero (host-test: TestUTF8ExhaustiveInWasm).
func TestUTF8CountExhaustive(t *testing.T) {
	checks := 0
	buf := make([]byte, 0, 64)
	for _, c := range utf8Cases() {
		for _, pl := range utf8Placements(len(c)) {
			buf = append(append(append(buf[:0], padding[:pl[0]]...), c...), padding[:pl[1]]...)
			n, ok := utf8Count(buf)
			if ok != utf8.Valid(buf) || ok && n != utf8.RuneCount(buf) {
				t.Fatalf("utf8Count(%q) = %d, %v; want %d, %v", buf, n, ok, utf8.RuneCount(buf), utf8.Valid(buf))
			}
			checks++
		}
	}
	t.Logf("%d checks", checks)
}

// padding is the ASCII the cases are placed in.
var padding = []byte("abcdefghijklmnopqrstuvwxyz0123456789")

// utf8Placements returns (ASCII before, ASCII after) byte counts that put a
// case of n bytes at offsets 0 to 15 (so its first byte is at every offset of
// the first and of the second 8-byte step of the unrolled loop, which starts
// at offset 0), in buffers of every length from the case's end up to 24 bytes
// (below 24 the word-at-a-time loop, its byte path and the tail take the
// case; from 24 on the unrolled loop does, and a longer buffer changes
// nothing it reads). The module's form (utf8_wasm.s) steps by eight bytes
// while twelve are left, by four while four are, then by one: those
// boundaries lie within these lengths too.
func utf8Placements(n int) [][2]int {
	var out [][2]int
	for pre := 0; pre < 16; pre++ {
		for end := pre + n; end <= max(24, pre+n); end++ {
			out = append(out, [2]int{pre, end - pre - n})
		}
	}
	return out
}

// utf8Cases returns every sequence of one and two bytes, and sequences of
// three and four bytes whose first two bytes run over the values that decide
// a character's class and range (every three-byte lead E0-EF and the edges of
// the other classes, with every second byte; four-byte leads F0-F5, F7 and
// FF with every second byte) and whose later bytes are one of each class
// edge (ASCII, the continuation bounds 80/8F/90/9F/A0/BF, lead bytes).
func utf8Cases() [][]byte {
	var out [][]byte
	for x := range 256 {
		out = append(out, []byte{byte(x)})
	}
	for x := range 1 << 16 {
		out = append(out, []byte{byte(x >> 8), byte(x)})
	}
	edges := []byte{0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff}
	cont := []byte{0x7f, 0x80, 0x8f, 0x90, 0xbf, 0xc0}
	leads3 := []byte{0xc0, 0xc1, 0xc2, 0xdf, 0xf0, 0xf4, 0xf5, 0xff}
	for x := byte(0xe0); x <= 0xef; x++ {
		leads3 = append(leads3, x)
	}
	for _, x := range leads3 {
		for y := range 256 {
			for _, z := range edges {
				out = append(out, []byte{x, byte(y), z})
			}
		}
	}
	for _, x := range []byte{0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf7, 0xff} {
		for y := range 256 {
			for _, z := range cont {
				for _, w := range cont {
					out = append(out, []byte{x, byte(y), z, w})
				}
			}
		}
	}
	return out
}

// TestShortASCII checks the decoder's short-key path against its
// definition: a fixstr header, at most 16 bytes held whole by b, all below
// 0x80, with 17 bytes readable; at every length up to 31 and a non-ASCII
// byte at every place, in the string and just after it.
func TestShortASCII(t *testing.T) {
	for n := range 32 {
		for bad := -1; bad <= n; bad++ {
			for extra := 0; extra <= 17; extra++ {
				b := append([]byte{0xa0 | byte(n)}, padding[:n]...)
				b = append(b, padding[:extra]...)
				if bad >= 0 && 1+bad < len(b) {
					b[1+bad] = 0xc3
				}
				want := len(b) >= 17 && n <= 16 && utf8.Valid(b[1:1+n]) && (bad < 0 || bad >= n)
				if bad >= 0 && bad < n {
					want = false
				}
				got, ok := shortASCII(b)
				if ok != want || ok && got != n {
					t.Fatalf("shortASCII(%q) = %d, %v; want %d, %v", b, got, ok, n, want)
				}
			}
		}
	}
}

// TestEqualText checks equalText against ==: every length up to 40, equal
// and differing at every byte, and of different lengths. Natively it is ==;
// host-test runs it compiled to WebAssembly, where it compares words.
func TestEqualText(t *testing.T) {
	for n := range 41 {
		a := string(padding[:min(n, len(padding))]) + string(make([]byte, max(0, n-len(padding))))
		for i := -1; i < n; i++ {
			b := []byte(a)
			if i >= 0 {
				b[i] ^= 0x40
			}
			if got, want := equalText(a, string(b)), a == string(b); got != want {
				t.Fatalf("equalText(%q, %q) = %v, want %v", a, b, got, want)
			}
		}
		if equalText(a, a+"x") || equalText(a+"x", a) {
			t.Fatalf("equalText of lengths %d and %d is true", n, n+1)
		}
	}
}
