package wirejson

import (
	"testing"
)

// A raw control character in a string: the error says which one and how JSON writes it (hand-written
// literals), and gives no general advice beside it.
func TestControlCharacterMessage(t *testing.T) {
	for _, c := range []struct {
		text, want string
	}{
		{"{\"a\":\"x\ty\"}", "invalid JSON at byte 7: control character U+0009 (tab) in a string: JSON text cannot hold it raw; write it as \\t"},
		{"{\"a\":\"\n\"}", "invalid JSON at byte 6: control character U+000A (line feed) in a string: JSON text cannot hold it raw; write it as \\n"},
		{"{\"a\":\"\x00\"}", "invalid JSON at byte 6: control character U+0000 in a string: JSON text cannot hold it raw; write it as \\u0000"},
		{"{\"a\":\"\x1f\"}", "invalid JSON at byte 6: control character U+001F in a string: JSON text cannot hold it raw; write it as \\u001F"},
		{"{\"a\":\"\r\"}", "invalid JSON at byte 6: control character U+000D (carriage return) in a string: JSON text cannot hold it raw; write it as \\r"},
	} {
		_, e := Request(nil, []byte(c.text))
		if e == nil || e.Message != c.want {
			t.Errorf("%q: got %+v, want %q", c.text, e, c.want)
		}
	}
	// Another syntax error keeps the general advice.
	if _, e := Request(nil, []byte(`{"a":`)); e == nil || e.Message != "invalid JSON at byte 5: unexpected end of input, expected a value; send one JSON object per request" {
		t.Errorf("end of input: %+v", e)
	}
}
