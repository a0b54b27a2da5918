package hosttest

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/wirejson"
)

// TestExportVectorsEveryEngine: wazero and wasmtime answer every export
// vector (testdata/export-vectors, from the independent Python reference
// testdata/gen/gen_export_vectors.py) as the reference does: an ok body's
// JSON text byte for byte, an error by code and path, and by its message
// where the vector gives one (a provider rule's refusal, docs/SPEC.md §7.13).
func TestExportVectorsEveryEngine(t *testing.T) {
	type vector struct {
		Name, Provider, Answer string
		Request, Options       []byte
		Error                  *struct{ Code, Path, Message string }
	}
	var all []vector
	for _, f := range []string{"export.json", "export-long.json"} {
		data, err := os.ReadFile("../testdata/export-vectors/" + f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Cases []vector }
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		all = append(all, doc.Cases...)
	}
	if len(all) < 600 || len(runners) < 2 {
		t.Fatalf("%d export vectors, %d engines", len(all), len(runners))
	}
	for _, c := range all {
		b := msgp.AppendMapHeader(nil, 3)
		b = append(msgp.AppendString(b, "request"), c.Request...)
		b = msgp.AppendString(msgp.AppendString(b, "provider"), c.Provider)
		b = append(msgp.AppendString(b, "options"), c.Options...)
		for _, r := range runners {
			got, rest, err := wirejson.FromMsgpack(nil, r.AppendCall(abi.CallExport, nil, b))
			if err != nil || len(rest) != 0 {
				t.Fatalf("%s, %s: an answer JSON cannot hold: %v", c.Name, r.Engine(), err)
			}
			if c.Error == nil {
				if string(got) != c.Answer {
					t.Fatalf("%s, %s:\n got %.400s\nwant %.400s", c.Name, r.Engine(), got, c.Answer)
				}
				continue
			}
			var e struct {
				Error *struct{ Code, Path, Message string }
			}
			if json.Unmarshal(got, &e) != nil || e.Error == nil || e.Error.Code != c.Error.Code || e.Error.Path != c.Error.Path ||
				c.Error.Message != "" && e.Error.Message != c.Error.Message {
				t.Fatalf("%s, %s: %.400s, want the error %+v", c.Name, r.Engine(), got, *c.Error)
			}
		}
	}
}
