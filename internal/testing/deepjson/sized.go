package deepjson

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
)

// Sized is a deep JSON text of a given size and the answer every host must
// give it: the core's answer to the msgpack it says, or for a text that
// is not JSON the syntax error's, written out here.
type Sized struct {
	Name string
	Text []byte
	Want []byte // the response
}

// SyntaxEnd is the answer to a JSON text of n bytes that ends inside a
// value (the reader's message, spelled out: a test of it, not a copy).
func SyntaxEnd(n int) []byte {
	return core.ErrorResponse(&core.Error{Code: core.CodeMalformedRequest, Offset: -1,
		Message: "invalid JSON at byte " + strconv.Itoa(n) + ": unexpected end of input, expected a value; send one JSON object per request"})
}

// SizedNames are the shapes of SizedCase: n bytes of '[' and of {"a":
// (no value ever ends: a syntax error at the end), and two requests the
// core refuses for a deep value: steps[0] arrays opened and closed, and
// objects under an unknown key before the template.
var SizedNames = []string{"[", `{"a":`, "steps[0]", "unknown x"}

// SizedCase is the text of about n bytes of the shape name (SizedNames).
func SizedCase(name string, n int) Sized {
	switch name {
	case "[":
		return Sized{name, bytes.Repeat([]byte("["), n), SyntaxEnd(n)}
	case `{"a":`:
		return Sized{name, bytes.Repeat([]byte(`{"a":`), n/5), SyntaxEnd(n / 5 * 5)}
	case "steps[0]":
		k := (n - 60) / 2
		text := append([]byte(`{`+tmplJSON+`,"steps":[`), bytes.Repeat([]byte("["), k)...)
		text = append(append(text, bytes.Repeat([]byte("]"), k)...), "]}"...)
		mp := msgp.AppendArrayHeader(msgp.AppendString(tmplMP(2), "steps"), 1)
		return Sized{name, text, core.AssembleBytes(append(append(mp, bytes.Repeat([]byte{0x91}, k-1)...), 0x90))}
	}
	j := (n - 60) / 6
	text := append(append([]byte(`{"x":`), bytes.Repeat([]byte(`{"a":`), j)...), '0')
	text = append(append(text, bytes.Repeat([]byte("}"), j)...), ","+tmplJSON+"}"...)
	mp := append(msgp.AppendString(msgp.AppendMapHeader(nil, 2), "x"), bytes.Repeat([]byte{0x81, 0xa1, 'a'}, j)...)
	mp = msgp.AppendString(msgp.AppendString(append(mp, 0), "observation_template"), "{observation}")
	return Sized{name, text, core.AssembleBytes(mp)}
}

const tmplJSON = `"observation_template":"{observation}"`

// tmplMP is a map header of n pairs and the template's pair.
func tmplMP(n uint32) []byte {
	return msgp.AppendString(msgp.AppendString(msgp.AppendMapHeader(nil, n), "observation_template"), "{observation}")
}

// TooLarge is a request whose JSON text is small enough (4m bytes and a
// few) but whose msgpack is over the 1 GiB limit: m short floats (9 bytes
// each in msgpack) under 100 levels of arrays under an unknown key. Its
// answer is too_large with that msgpack's size, counted here.
func TooLarge(m int) Sized {
	text := append([]byte(`{`+tmplJSON+`,"x":`), bytes.Repeat([]byte("["), 100)...)
	text = append(append(text, bytes.Repeat([]byte("1e0,"), m-1)...), "1e0"...)
	text = append(append(text, bytes.Repeat([]byte("]"), 100)...), '}')
	size := len(tmplMP(2)) + 2 + 99 + len(msgp.AppendArrayHeader(nil, uint32(m))) + 9*m
	return Sized{"too large", text, core.ErrorResponse(&core.Error{Code: core.CodeTooLarge, Offset: -1,
		Message: fmt.Sprintf(core.MsgRequestTooLargeFormat, size)})}
}
