package hosttest

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/wasm/dispatch"
	"github.com/polyloop/assembly/wirejson"
)

// hostileCase is one case of testdata/hostile-vectors/hostile.json (written
// by testdata/gen/gen_hostile_vectors.py, its verdicts by hand from the
// spec); Python and JavaScript run the same file.
type hostileCase struct {
	Name, Call string
	Args       []byte
	Error      *hostileErr
	OK         bool // instead of error and calls: an answer that is no error (export, compare)
	Calls      []struct {
		OK         bool
		Error      *hostileErr
		UsageError *hostileErr `json:"usage_error"`
	}
}

type hostileErr struct{ Code, Path string }

// hostileAnswer is an answer of cache_report (JSON) or export (a msgpack map) as
// the vectors judge it.
type hostileAnswer struct {
	Error *hostileErr
	Calls []struct {
		Error *hostileErr
		Usage *struct{ Error *hostileErr }
	}
}

// TestHostileVectorsEveryEngine: natively, on wazero and on wasmtime, every
// hostile vector gets its verdict (code and path; messages aside).
func TestHostileVectorsEveryEngine(t *testing.T) {
	data, err := os.ReadFile("../testdata/hostile-vectors/hostile.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Cases []hostileCase }
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) < 141 { // issue 44: the adversarial matrix holds 141 cases at least
		t.Fatalf("%d hostile vectors", len(doc.Cases))
	}
	type caller struct {
		name string
		call func(c abi.Call, b []byte) []byte
	}
	all := []caller{{"native", func(c abi.Call, b []byte) []byte { return dispatch.Append(c, nil, b) }}}
	for _, r := range runners {
		all = append(all, caller{r.Engine(), func(c abi.Call, b []byte) []byte { return r.AppendCall(c, nil, b) }})
	}
	for _, c := range doc.Cases {
		call := map[string]abi.Call{"export": abi.CallExport, "cache_report": abi.CallCacheReport, "compare": abi.CallCompare}[c.Call]
		if call == 0 {
			t.Fatalf("%s: unknown call %q", c.Name, c.Call)
		}
		for _, e := range all {
			ans := e.call(call, c.Args)
			if call == abi.CallExport {
				if ans, _, err = wirejson.FromMsgpack(nil, ans); err != nil {
					t.Fatalf("%s, %s: %v", c.Name, e.name, err)
				}
			}
			if msg := judgeHostile(c, ans); msg != "" {
				t.Errorf("%s, %s: %s: %.400s", c.Name, e.name, msg, ans)
			}
		}
	}
}

// judgeHostile is "" when the answer (JSON) is the case's verdict, else what differs.
func judgeHostile(c hostileCase, ans []byte) string {
	var a hostileAnswer
	if err := json.Unmarshal(ans, &a); err != nil {
		return "not JSON: " + err.Error()
	}
	if c.Error != nil {
		if a.Error == nil || *a.Error != *c.Error {
			return "want the error " + c.Error.Code + " at " + c.Error.Path
		}
		return ""
	}
	if c.OK {
		if a.Error != nil {
			return "want no error, got " + a.Error.Code + " at " + a.Error.Path
		}
		return ""
	}
	if a.Error != nil || len(a.Calls) != len(c.Calls) {
		return "want a report of " + string(rune('0'+len(c.Calls))) + " calls"
	}
	for i, w := range c.Calls {
		got := a.Calls[i]
		var usageErr *hostileErr
		if got.Usage != nil {
			usageErr = got.Usage.Error
		}
		switch {
		case w.OK && (got.Error != nil || usageErr != nil),
			w.Error != nil && (got.Error == nil || *got.Error != *w.Error),
			w.UsageError != nil && (usageErr == nil || *usageErr != *w.UsageError):
			return "call " + string(rune('0'+i)) + " is not as the vector says"
		}
	}
	return ""
}
