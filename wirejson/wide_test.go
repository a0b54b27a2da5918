package wirejson

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/tinylib/msgp/msgp"
)

// TestWideHeaders: strings and containers on each side of every header-size
// boundary, nested, after floats that make the msgpack longer than the text
// and whether the final sweep works in place or needs a new buffer, are
// written with the shortest headers, each in its place.
// The expected bytes are built with msgp's own writers.
func TestWideHeaders(t *testing.T) {
	var text strings.Builder
	var want []byte
	text.WriteString(`{"floats":[`)
	want = msgp.AppendMapHeader(want, 3)
	want = msgp.AppendString(want, "floats")
	want = msgp.AppendArrayHeader(want, 40)
	for i := range 40 {
		if i > 0 {
			text.WriteByte(',')
		}
		text.WriteString("1.5")
		want = msgp.AppendFloat64(want, 1.5)
	}
	text.WriteString(`],"strs":[`)
	want = msgp.AppendString(want, "strs")
	lens := []int{0, 31, 32, 255, 256, 65535, 65536, 70000}
	want = msgp.AppendArrayHeader(want, uint32(len(lens)))
	for i, n := range lens {
		if i > 0 {
			text.WriteByte(',')
		}
		// an escape in each: the decoded length is one less than the text's
		s := strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
		text.WriteString(`"\n` + s[:len(s)-min(len(s), 1)] + `"`)
		want = msgp.AppendString(want, "\n"+s[:len(s)-min(len(s), 1)])
	}
	text.WriteString(`],"boxes":[`)
	want = msgp.AppendString(want, "boxes")
	counts := []uint32{15, 16, 65535, 65536}
	want = msgp.AppendArrayHeader(want, uint32(len(counts)))
	for i, n := range counts {
		if i > 0 {
			text.WriteByte(',')
		}
		text.WriteString(`{"a":[`)
		want = msgp.AppendMapHeader(want, 1)
		want = msgp.AppendString(want, "a")
		want = msgp.AppendArrayHeader(want, n)
		for j := range n {
			if j > 0 {
				text.WriteByte(',')
			}
			text.WriteString(`[]`)
			want = msgp.AppendArrayHeader(want, 0)
		}
		text.WriteString(`]}`)
	}
	text.WriteString(`]}`)
	src := []byte(text.String())
	for _, dst := range [][]byte{nil, []byte("prefix"), make([]byte, 3, 4*len(src))} {
		got, err := ToMsgpack(dst, src)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[:len(dst)], dst) || !bytes.Equal(got[len(dst):], want) {
			t.Fatalf("dst of len %d cap %d: the msgpack differs (got %d bytes, want %d)", len(dst), cap(dst), len(got)-len(dst), len(want))
		}
	}
	// no room left after the one-byte headers: the sweep writes a new buffer
	p := parser{src: src, out: []byte("prefix")}
	if err := p.run(); err != nil {
		t.Fatal(err)
	}
	p.out = slices.Clip(p.out)
	if got := p.widen(); !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("into a new buffer: the msgpack differs (got %d bytes, want %d)", len(got)-6, len(want))
	}
}
