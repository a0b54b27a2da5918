package core

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
)

// TestWhiteSpaceIsUnicodes: isWhiteSpace is Go's White_Space table, code
// point for code point.
func TestWhiteSpaceIsUnicodes(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if isWhiteSpace(r) != unicode.Is(unicode.White_Space, r) {
			t.Fatalf("U+%04X: isWhiteSpace %v", r, isWhiteSpace(r))
		}
	}
}

// TestRendersBlank: rendersBlank says what the rendering itself shows
// (strings.TrimFunc with Go's White_Space table), for templates whose
// literals, fills, precisions and conversions can leave a blank rendering,
// over blank, partly blank and random observations.
func TestRendersBlank(t *testing.T) {
	templates := []string{
		"{observation}", " {observation:.2}", "{observation:\u3000^3.0}", "{observation!r: <4.0}\n",
		"{observation:>8}", "\n{observation}\t", "{observation:.1}{observation!a:.0}", "{observation!r}",
		"{observation!a:\u00a0>3.0}", "{observation:*<3.0}", "{observation: ^5.3}|", "{observation:.0}{observation}",
		"{observation}{observation:.1}", "{{}}{observation}", "{observation!s:\u2028>2}", "{observation:.3} ",
		"Observation: {observation}", "{observation:\u3000<6}", "{observation!r:*>3.0}",
	}
	obs := []string{"", " ", "  x", " x ", "\u3000\u3000\u3000y", "\t", "abc", "\u00a0\u00a0", "\u200b", "\x1c", "é ", "   "}
	r := rand.New(rand.NewPCG(4, 41))
	alphabet := []rune(" \t\u3000\u00a0x\u200b'é")
	for range 300 {
		var b strings.Builder
		for range r.IntN(7) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		obs = append(obs, b.String())
	}
	blank := func(s string) bool {
		return strings.TrimFunc(s, func(r rune) bool { return unicode.Is(unicode.White_Space, r) }) == ""
	}
	seen := [2]int{}
	for _, src := range templates {
		tp, err := ParseTemplate(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		for _, o := range obs {
			got, want := tp.rendersBlank(o), blank(tp.Render(o))
			if got != want {
				t.Fatalf("%q with %q renders %q: rendersBlank %v", src, o, tp.Render(o), got)
			}
			if got {
				seen[1]++
			} else {
				seen[0]++
			}
		}
	}
	if seen[0] < 100 || seen[1] < 100 {
		t.Fatalf("blank and not: %v", seen)
	}
}
