package hosttest

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/hostvec"
	"github.com/polyloop/assembly/internal/testing/randreq"
	"github.com/polyloop/assembly/internal/testing/vectors"
	"github.com/polyloop/assembly/wasmhost"
)

// The prompt vectors (testdata/prompt-vectors) on both engines' Prompt,
// whose incremental rules (overflow, the steps[k] path, the response limit)
// are the module's add_step export.
func TestPromptVectorsEveryEngine(t *testing.T) {
	cases, err := vectors.LoadPrompts("../testdata/prompt-vectors/prompts.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, rn := range runners {
		for _, c := range cases {
			if err := hostvec.RunPrompt(c, func(req *core.Request) (*wasmhost.Prompt, error) { return rn.NewPrompt(req) }); err != nil {
				t.Errorf("%s: %v", rn.Engine(), err)
			}
		}
		t.Logf("%s: %d prompt vectors", rn.Engine(), len(cases))
	}
}

// The sandboxed Prompt (one step per call into the module) equals the
// native Prompt and native Assemble, on both engines.
func TestPromptEveryEngine(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, rn := range runners {
		checked := 0
		for range 300 {
			full := randreq.Request(r)
			want, err := core.Assemble(full)
			if err != nil {
				continue
			}
			start := *full
			start.Steps = nil
			p, err := rn.NewPrompt(&start)
			if err != nil {
				t.Fatalf("%s: %v", rn.Engine(), err)
			}
			native, _ := core.NewPrompt(&start)
			for i, s := range full.Steps {
				if err := p.AddStep(s.RawOutput, s.Observation); err != nil {
					t.Fatalf("%s: %v", rn.Engine(), err)
				}
				native.AddStep(s.RawOutput, s.Observation)
				start.Steps = full.Steps[:i+1]
				if p.State() != native.State() || p.State().RequestBytes != len(core.EncodeRequest(&start)) {
					t.Fatalf("%s: state %+v, native %+v, the request is %d bytes", rn.Engine(), p.State(), native.State(), len(core.EncodeRequest(&start)))
				}
				editResponse(p.Response()) // what a caller does with it leaves the prompt as it is
			}
			got := p.Response()
			if got.PromptChars != want.PromptChars || got.ContextOverflow != want.ContextOverflow || got.PrefixDigests != want.PrefixDigests ||
				!reflect.DeepEqual(got.MessageChars, want.MessageChars) || len(got.Messages) != len(want.Messages) {
				t.Fatalf("%s: Prompt differs from Assemble:\n got %d %v %v %+v %v\nwant %d %v %v %+v %v", rn.Engine(), got.PromptChars, got.ContextOverflow, got.MessageChars, got.PrefixDigests, len(got.Messages), want.PromptChars, want.ContextOverflow, want.MessageChars, want.PrefixDigests, len(want.Messages))
			}
			for i := range got.Messages {
				if got.Messages[i].Role != want.Messages[i].Role || !reflect.DeepEqual(blocks(got.Messages[i].Content), blocks(want.Messages[i].Content)) {
					t.Fatalf("%s: message %d differs", rn.Engine(), i)
				}
			}
			checked++
		}
		p, err := rn.NewPrompt(&core.Request{ObservationTemplate: "{observation}"})
		if err != nil {
			t.Fatal(err)
		}
		p.AddStep("a", "b")
		err = p.AddStep("a", "\xed\xa0\x80")
		if e, ok := err.(*core.Error); !ok || e.Code != core.CodeInvalidUTF8 || e.Path != "steps[1].observation" {
			t.Fatalf("%s: got %v, want invalid_utf8 at steps[1].observation", rn.Engine(), err)
		}
		t.Logf("%s: %d prompts built step by step equal Assemble", rn.Engine(), checked)
	}
}

// blocks treats nil and empty content alike: the typed API does not promise
// which one an empty content is.
func blocks(b []core.Block) []core.Block {
	if len(b) == 0 {
		return nil
	}
	return b
}

// editResponse changes what Response returns in every way its contract
// allows (docs/SPEC.md §7.3): its fields, appends to its slices, and every
// element of a Clone.
func editResponse(r *core.Response) {
	r.PromptChars, r.ContextOverflow = -1, !r.ContextOverflow
	r.Messages = append(r.Messages, core.Message{Role: "x"})
	r.MessageChars = append(r.MessageChars, 1)
	r.Injected = append(r.Injected, core.Injected{Channel: "x"})
	r.PrefixDigests.Run = "x"
	c := r.Clone()
	for i := range c.Messages {
		c.Messages[i].Role = "edited"
		for j := range c.Messages[i].Content {
			c.Messages[i].Content[j].Text += "edited"
		}
		c.MessageChars[i] = -1
	}
	for i := range c.Injected {
		c.Injected[i].EntryID = "edited"
	}
}
