package core

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tinylib/msgp/msgp"
)

// unreadableExt is the ExtUnreadable value a host writes for a value it could
// not read, with its three texts (docs/SPEC.md §7.6).
func unreadableExt(typ int8, texts ...string) []byte {
	var data []byte
	data = msgp.AppendArrayHeader(data, uint32(len(texts)))
	for _, t := range texts {
		data = msgp.AppendString(data, t)
	}
	b, err := msgp.AppendExtension(nil, &msgp.RawExtension{Type: typ, Data: data})
	if err != nil {
		panic(err)
	}
	return b
}

func TestUnreadableValue(t *testing.T) {
	ext := unreadableExt(ExtUnreadable, "Mapping", "RuntimeError", "boom")
	want := "reading this Mapping raised RuntimeError: boom; the request was not sent (fix the value, or pass plain dicts, lists and str)"
	m := func(kv ...[]byte) []byte { // a map of key, value pairs (keys as str)
		b := msgp.AppendMapHeader(nil, uint32(len(kv)/2))
		for i := 0; i < len(kv); i += 2 {
			b = append(msgp.AppendString(b, string(kv[i])), kv[i+1]...)
		}
		return b
	}
	s := func(v string) []byte { return msgp.AppendString(nil, v) }
	v1 := msgp.AppendInt(nil, 1)
	steps := append(msgp.AppendArrayHeader(nil, 2), m([]byte("raw_output"), s("a"), []byte("observation"), s("b"))...)
	steps = append(steps, m([]byte("raw_output"), s("a"), []byte("observation"), ext)...)
	cases := []struct {
		name, path, msg string
		req             []byte
	}{
		{"top", "", want, ext},
		{"template", "observation_template", want, m([]byte("v"), v1, []byte("observation_template"), ext)},
		{"steps[1].observation", "steps[1].observation", want, m([]byte("v"), v1, []byte("observation_template"), s("{observation}"), []byte("steps"), steps)},
		{"run_messages", "run_messages", want, m([]byte("v"), v1, []byte("run_messages"), ext, []byte("observation_template"), s("{observation}"))},
		// The first problem wins: an unknown key before the unreadable value.
		{"first wins", "nope", "", m([]byte("v"), v1, []byte("nope"), s("x"), []byte("observation_template"), ext)},
		// Anything but a well-formed ExtUnreadable is an ext value like any other.
		{"other type", "observation_template", "expected a str (UTF-8 text), found an ext value", m([]byte("v"), v1, []byte("observation_template"), unreadableExt(2, "a", "b", "c"))},
		{"two texts", "observation_template", "expected a str (UTF-8 text), found an ext value", m([]byte("v"), v1, []byte("observation_template"), unreadableExt(ExtUnreadable, "a", "b"))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeResponse(AssembleBytes(c.req))
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("want an *Error, got %v", err)
			}
			if e.Path != c.path || (c.msg != "" && e.Message != c.msg) {
				t.Fatalf("got %s at %q: %q; want at %q: %q", e.Code, e.Path, e.Message, c.path, c.msg)
			}
			if c.msg == want && e.Code != CodeMalformedRequest {
				t.Fatalf("code %s", e.Code)
			}
		})
	}
	// A key that could not be read.
	key := append(msgp.AppendMapHeader(nil, 2), append(append(msgp.AppendString(nil, "v"), v1...), ext...)...)
	key = append(key, s("x")...)
	if _, err := DecodeResponse(AssembleBytes(key)); err == nil || err.(*Error).Message != want {
		t.Fatalf("unreadable key: %v", err)
	}
	// Long texts are quoted as excerpts: the error stays small.
	long := strings.Repeat("é", 100000)
	resp := AssembleBytes(unreadableExt(ExtUnreadable, long, long, long))
	if len(resp) > 4096 || !bytes.Contains(resp, []byte("…")) {
		t.Fatalf("error response of %d bytes", len(resp))
	}
}
