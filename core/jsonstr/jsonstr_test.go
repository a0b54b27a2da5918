package jsonstr

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAppendEscapesEveryByte: every string of random bytes, the bytes
// Append escapes placed at every offset of an 8-byte word, quoted the way
// encoding/json's decoder reads back to the same text (for valid UTF-8)
// and with exactly the escapes of a byte-by-byte reference.
func TestAppendEscapesEveryByte(t *testing.T) {
	ref := func(s string) string {
		var b strings.Builder
		b.WriteByte('"')
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c == '"' || c == '\\':
				b.WriteString("\\" + string(c))
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c == '\b':
				b.WriteString(`\b`)
			case c == '\f':
				b.WriteString(`\f`)
			case c < 0x20:
				b.WriteString(`\u00` + string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&15]))
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
		return b.String()
	}
	r := rand.New(rand.NewPCG(7, 8))
	for n := range 20000 {
		buf := make([]byte, r.IntN(40))
		for i := range buf {
			switch r.IntN(4) {
			case 0:
				buf[i] = byte(r.IntN(256))
			case 1:
				buf[i] = "\"\\\x00\x1f\x20\x7f\x80\xa0\xff"[r.IntN(9)]
			default:
				buf[i] = byte('a' + r.IntN(26))
			}
		}
		s := string(buf)
		if got, want := string(Append(nil, s)), ref(s); got != want {
			t.Fatalf("case %d %q: got %s, want %s", n, s, got, want)
		}
	}
	for _, s := range []string{"", "plain text, long enough for words", "café 日本 🙂 \u2028", "tab\tand \"quotes\" \\"} {
		var back string
		if err := json.Unmarshal(Append(nil, s), &back); err != nil || back != s {
			t.Errorf("%q reads back as %q (%v)", s, back, err)
		}
	}
}
