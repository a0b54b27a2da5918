package hosttest

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/randreq"
	"github.com/polyloop/assembly/internal/testing/vectors"
	"github.com/polyloop/assembly/wirejson"
)

// The module's assemble_view and assemble_view_json exports (docs/SPEC.md
// §7.8) on wazero and wasmtime answer the bytes the native core does
// (core.AppendAssembleViewBytes, wirejson.AppendAssembleView), and the
// response inside each answer is assemble's.

func sameView(t *testing.T, label string, req []byte) {
	t.Helper()
	want := core.AppendAssembleViewBytes(nil, req)
	resp, _, err := core.SplitViewAnswer(want)
	if err != nil || !bytes.Equal(resp, core.AssembleBytes(req)) {
		t.Fatalf("%s: the native view answer does not hold assemble's response (%v)", label, err)
	}
	for _, r := range runners {
		if got := r.AssembleView(req); !bytes.Equal(got, want) {
			t.Fatalf("%s: %s's assemble_view differs from native:\n native: %q\n %s: %q", label, r.Engine(), trim(want), r.Engine(), trim(got))
		}
	}
}

func TestViewVectorsAndRandomEveryEngine(t *testing.T) {
	cases, err := vectors.Load("../testdata/vectors")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		sameView(t, c.File+"/"+c.Name, c.Request)
	}
	r := rand.New(rand.NewPCG(2026, 12))
	n := min(randomCount(), 3000)
	for i := range n {
		sameView(t, "random request "+strconv.Itoa(i)+" (seed 2026/12)", randreq.Bytes(r))
	}
	t.Logf("%d vectors and %d random requests: assemble_view identical on native and %d modules", len(cases), n, len(runners))
	countCases(t, (len(cases)+n)*len(runners))
}

func TestViewJSONVectorsEveryEngine(t *testing.T) {
	cases, err := vectors.LoadJSON("../testdata/json-vectors")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		want := wirejson.AppendAssembleView(nil, c.Text)
		resp, _, err := core.SplitViewAnswer(want)
		if err != nil || !bytes.Equal(resp, wirejson.AppendAssemble(nil, c.Text)) {
			t.Fatalf("%s: the native view answer does not hold assemble_json's response (%v)", c.Name, err)
		}
		for _, r := range runners {
			if got := r.AssembleViewJSON(c.Text); !bytes.Equal(got, want) {
				t.Errorf("%s: %s: assemble_view_json differs from native:\n got    %.200q\n native %.200q", r.Engine(), c.Name, got, want)
			}
		}
	}
	t.Logf("%d JSON-text vectors: assemble_view_json identical on native and %d modules", len(cases), len(runners))
	countCases(t, len(cases)*len(runners))
}
