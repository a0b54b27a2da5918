package core_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/randreq"
)

// After k AddSteps a Prompt equals Assemble of the request with those k steps.
func TestPromptEqualsAssemble(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	checked := 0
	for range 3000 {
		full := randreq.Request(r)
		want, err := core.Assemble(full)
		if err != nil {
			continue
		}
		k := r.IntN(len(full.Steps) + 1)
		start := *full
		start.Steps = full.Steps[:k]
		p, err := core.NewPrompt(&start)
		if err != nil {
			t.Fatalf("NewPrompt refuses a prefix of a valid request: %v", err)
		}
		for _, s := range full.Steps[k:] {
			if err := p.AddStep(s.RawOutput, s.Observation); err != nil {
				t.Fatal(err)
			}
		}
		if got := p.Response(); !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Fatalf("Prompt after %d+%d steps differs from Assemble:\n got %+v\nwant %+v", k, len(full.Steps)-k, got, want)
		}
		checked++
	}
	if checked < 1000 {
		t.Fatalf("only %d valid requests checked", checked)
	}
}

func normalize(r *core.Response) *core.Response {
	c := *r
	if len(c.Injected) == 0 {
		c.Injected = nil
	}
	for i := range c.Messages {
		if len(c.Messages[i].Content) == 0 {
			c.Messages[i].Content = nil
		}
	}
	return &c
}

func TestPromptAddStepRejectsBadText(t *testing.T) {
	p, err := core.NewPrompt(&core.Request{ObservationTemplate: "{observation}", Steps: []core.Step{{RawOutput: "a", Observation: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	before := len(p.Response().Messages)
	err = p.AddStep("ok", "bad \xed\xa0\x80 surrogate")
	e, ok := err.(*core.Error)
	if !ok || e.Code != core.CodeInvalidUTF8 || e.Path != "steps[1].observation" {
		t.Fatalf("got %v, want invalid_utf8 at steps[1].observation", err)
	}
	if len(p.Response().Messages) != before {
		t.Fatal("a refused step changed the prompt")
	}
	if err := p.AddStep("x", "y"); err != nil {
		t.Fatal(err)
	}
	if err := p.AddStep("\xff", "y"); err == nil || err.(*core.Error).Path != "steps[2].raw_output" {
		t.Fatalf("got %v, want invalid_utf8 at steps[2].raw_output", err)
	}
}
