package wirejson_test

import (
	"bytes"
	"testing"

	"github.com/polyloop/assembly/internal/testing/hostvec"
	"github.com/polyloop/assembly/internal/testing/vectors"
	"github.com/polyloop/assembly/wirejson"
)

// TestJSONVectors runs the shared JSON-text vectors natively: the msgpack the
// reader makes of each text is the oracle's, byte for byte (with stand-ins
// past the depth bound: standIns), and AppendAssemble answers what the case
// expects.
func TestJSONVectors(t *testing.T) {
	cases, err := vectors.LoadJSON("../testdata/json-vectors")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 60 {
		t.Fatalf("only %d JSON-text vectors", len(cases))
	}
	for _, c := range cases {
		mp, err := wirejson.ToMsgpack(nil, c.Text)
		switch {
		case c.Syntax && err == nil:
			t.Errorf("%s: want a JSON syntax error, the reader accepted it", c.Name)
		case !c.Syntax && err != nil:
			t.Errorf("%s: %v", c.Name, err)
		case !c.Syntax && !bytes.Equal(mp, standIns(t, c.Msgpack, wirejson.FullDepth(), false)):
			t.Errorf("%s: the msgpack differs from the oracle's:\n got  %.120x\n want %.120x", c.Name, mp, c.Msgpack)
		}
		if err := hostvec.CheckJSON(c, wirejson.AppendAssemble(nil, c.Text)); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
}
