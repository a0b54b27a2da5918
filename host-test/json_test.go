package hosttest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/polyloop/assembly/core"

	"github.com/polyloop/assembly/core/wirejson"
	"github.com/polyloop/assembly/internal/testing/hostvec"
	"github.com/polyloop/assembly/internal/testing/vectors"
)

// TestJSONVectorsEveryEngine runs the shared JSON-text vectors through the
// module's assemble_json export on wazero and wasmtime (Runner.AssembleJSON):
// each answer is what the case expects and byte-identical to the native
// reader's (syntax-error messages included).
func TestJSONVectorsEveryEngine(t *testing.T) {
	cases, err := vectors.LoadJSON("../testdata/json-vectors")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		native := wirejson.AppendAssemble(nil, c.Text)
		for _, r := range runners {
			got := r.AssembleJSON(c.Text)
			if err := hostvec.CheckJSON(c, got); err != nil {
				t.Errorf("%s: %s: %v", r.Engine(), c.Name, err)
			} else if !bytes.Equal(got, native) {
				t.Errorf("%s: %s: differs from the native reader:\n got    %.200q\n native %.200q", r.Engine(), c.Name, got, native)
			}
		}
	}
	t.Logf("%d JSON-text vectors, identical on native, wazero and wasmtime", len(cases))
	countCases(t, 3*len(cases))
}

// TestJSONOver4GiBIsTooLarge: JSON text of 4 GiB, one byte more than
// msgpack can count, is too_large at "" with the message the Python and JS
// bindings give it (core.MsgRequestTooLargeFormat of its size), natively and
// through Runner.AssembleJSON on both engines. (The text is never read:
// its zero pages cost no memory.)
func TestJSONOver4GiBIsTooLarge(t *testing.T) {
	text := make([]byte, 1<<32)
	want := fmt.Sprintf(core.MsgRequestTooLargeFormat, len(text))
	check := func(name string, resp []byte) {
		_, err := core.DecodeResponse(resp)
		if e, ok := err.(*core.Error); !ok || e.Code != core.CodeTooLarge || e.Path != "" || e.Message != want {
			t.Errorf("%s: %v; want too_large at \"\": %s", name, err, want)
		}
	}
	check("native", wirejson.AppendAssemble(nil, text))
	for _, r := range runners {
		check(r.Engine(), r.AssembleJSON(text))
	}
}
