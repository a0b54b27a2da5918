package hosttest

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/randreq"
)

// add_step answers byte-identical responses on native, wazero and wasmtime:
// add_step requests folded over random requests, some with a wrong prompt
// state, some mutated into broken bytes (docs/SPEC.md §7.3.1).
func TestAddStepEveryEngine(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 3))
	hosts := []func([]byte) []byte{core.AddStepBytes, runners[0].AddStepBytes, runners[1].AddStepBytes}
	codes := map[string]int{}
	for i := 0; i < randomCount()/10; {
		full := randreq.Request(r)
		base := core.AssembleBytes(core.EncodeRequest(&core.Request{ObservationTemplate: full.ObservationTemplate, MaxPromptChars: full.MaxPromptChars, RunMessages: full.RunMessages}))
		st := core.PromptState{Messages: len(full.RunMessages), ResponseBytes: len(base)}
		if d, err := core.DecodeResponse(base); err == nil {
			st.PromptChars = d.PromptChars
		}
		for _, s := range full.Steps {
			want := st
			if r.IntN(8) == 0 {
				want = core.PromptState{Steps: r.IntN(4), Messages: r.IntN(9), PromptChars: int64(r.IntN(100)) - 2, ResponseBytes: r.IntN(1000) - 2}
			}
			req := core.EncodeAddStepRequest(full.ObservationTemplate, full.MaxPromptChars, want, s)
			if r.IntN(4) == 0 {
				req = randreq.Mutate(r, req)
			}
			resp := hosts[0](req)
			for j, h := range hosts[1:] {
				if got := h(req); !bytes.Equal(got, resp) {
					t.Fatalf("add_step request %d: %s answers differently from native:\n native: %x\n %s: %x", i, runners[j].Engine(), trim(resp), runners[j].Engine(), trim(got))
				}
			}
			i++
			sr, err := core.DecodeStepResponse(resp)
			if e, ok := err.(*core.Error); ok {
				if e.Code == core.CodeInternal {
					t.Fatalf("add_step request %d: internal error: %s", i, e.Message)
				}
				codes[string(e.Code)]++
				continue
			} else if err != nil {
				t.Fatalf("add_step request %d: the response does not decode: %v", i, err)
			}
			codes["ok"]++
			st = sr.Prompt
		}
	}
	t.Logf("add_step requests identical on %d hosts; outcomes %v", len(hosts), codes)
	if codes["ok"] < 200 || codes["malformed_request"] == 0 || codes["invalid_template"] == 0 {
		t.Fatalf("too few of each outcome: %v", codes)
	}
}
