package wirejson

import (
	"encoding/json"
	"testing"

	"github.com/tinylib/msgp/msgp"
)

// FuzzToMsgpack: the reader accepts exactly the texts encoding/json accepts
// (the syntax of RFC 8259; both keep invalid UTF-8), and what it writes is
// one whole msgpack value.
func FuzzToMsgpack(f *testing.F) {
	for _, s := range []string{`{}`, `[1,2,{"a":"b\u00e9\ud800"}]`, `{"a":1.5e3,"b":-0,"c":18446744073709551616}`,
		`"\"\\\/\b\f\n\r\t"`, `[[[[]]]]`, "{\"a\":\"x\xff\"}", `01`, `{"a" 1}`, `[1,]`, ` null `, `"` + string(make([]byte, 40)) + `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		mp, err := ToMsgpack(nil, text)
		if valid := json.Valid(text); valid != (err == nil) {
			t.Fatalf("%q: encoding/json says valid=%v, the reader says %v", text, valid, err)
		}
		if err != nil {
			return
		}
		rest, err := msgp.Skip(mp)
		if err != nil || len(rest) != 0 {
			t.Fatalf("%q: the msgpack %x is not one whole value (%v, %d bytes left)", text, mp, err, len(rest))
		}
	})
}
