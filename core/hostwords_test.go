package core

import (
	"strings"
	"testing"

	"github.com/tinylib/msgp/msgp"
)

// assembleError is the *Error of AssembleBytes(req), failing t if it answers ok.
func assembleError(t *testing.T, req []byte) *Error {
	t.Helper()
	_, err := DecodeResponse(AssembleBytes(req))
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("want an *Error, got %v", err)
	}
	return e
}

// JSON text handed to the msgpack entry point (a str, bin, or its bytes as
// they are) is told where JSON text goes, in every host's words, since the
// message is the same in every host (docs/SPEC.md §6).
func TestTopLevelJSONTextNamesTheJSONEntryPoints(t *testing.T) {
	text := `{"observation_template": "{observation}"}`
	entries := []string{"assemble_json (Python)", "assembleJSON (JavaScript)", "Runner.AssembleJSON (Go)", "polyloop-assemble --in json"}
	for _, c := range []struct {
		name, found string
		req         []byte
	}{
		{"str", "found a str;", msgp.AppendString(nil, text)},
		{"bin", "found bin (bytes);", msgp.AppendBytes(nil, []byte(text))},
		{"JSON bytes", "found an int (the byte '{');", []byte(text)},
		{"JSON bytes after a newline", `found an int (the byte '\n');`, []byte("\n" + text)},
		{"a JSON array", "found an int (the byte '[');", []byte("[]")},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := assembleError(t, c.req)
			if e.Code != CodeMalformedRequest || e.Path != "" || !strings.HasPrefix(e.Message, "the request must be a msgpack map, "+c.found) {
				t.Fatalf("got %s at %q: %q", e.Code, e.Path, e.Message)
			}
			for _, want := range entries {
				if !strings.Contains(e.Message, want) {
					t.Errorf("%q does not name %q", e.Message, want)
				}
			}
		})
	}
	// Other values are not taken for JSON text.
	for _, req := range [][]byte{msgp.AppendInt(nil, 1), msgp.AppendArrayHeader(nil, 0), msgp.AppendNil(nil)} {
		if e := assembleError(t, req); strings.Contains(e.Message, "assemble_json") {
			t.Errorf("% x: %q", req, e.Message)
		}
	}
}

// An add_step request is written by a host, never by a person: no JSON hint.
func TestAddStepTopLevelStrHasNoJSONHint(t *testing.T) {
	_, err := DecodeStepResponse(AddStepBytes(msgp.AppendString(nil, "{}")))
	if e, ok := err.(*Error); !ok || e.Message != "the request must be a msgpack map, found a str" {
		t.Fatalf("got %v", err)
	}
}

// nil is msgpack's word; a person passed Python's None or JSON's or
// JavaScript's null, so the message names them too (docs/SPEC.md §6: the
// same words in every host).
func TestNilIsNamedInEveryHostsWords(t *testing.T) {
	req := msgp.AppendMapHeader(nil, 1)
	req = msgp.AppendNil(msgp.AppendString(req, "observation_template"))
	e := assembleError(t, req)
	want := "expected a str (UTF-8 text), found nil (None in Python; null in JSON and JavaScript)"
	if e.Code != CodeMalformedRequest || e.Path != "observation_template" || e.Message != want {
		t.Fatalf("got %s at %q: %q", e.Code, e.Path, e.Message)
	}
	// A nil key, a nil request.
	key := msgp.AppendNil(msgp.AppendMapHeader(nil, 1))
	if e := assembleError(t, msgp.AppendNil(key)); !strings.HasSuffix(e.Message, "found nil (None in Python; null in JSON and JavaScript)") {
		t.Errorf("nil key: %q", e.Message)
	}
	if e := assembleError(t, msgp.AppendNil(nil)); e.Message != "the request must be a msgpack map, found nil (None in Python; null in JSON and JavaScript)" {
		t.Errorf("nil request: %q", e.Message)
	}
}
