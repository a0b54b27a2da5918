package hosttest

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/randreq"
)

// The typed APIs (docs/SPEC.md §7.2): Runner.Assemble, Runner.ValidateTemplate and
// Runner.NewPrompt on wazero and wasmtime give what core.Assemble,
// core.ValidateTemplate and core.NewPrompt give natively: the same Response
// (reflect.DeepEqual) or the same *core.Error (code, path, message, offset).

// sameErr fails unless got and want are both nil or equal *core.Errors.
func sameErr(t *testing.T, label string, got, want error) {
	t.Helper()
	if got == nil && want == nil {
		return
	}
	g, gok := got.(*core.Error)
	w, wok := want.(*core.Error)
	if !gok || !wok || *g != *w {
		t.Fatalf("%s:\n got %#v\nwant %#v (native)", label, got, want)
	}
}

func TestTypedAssembleEveryEngine(t *testing.T) {
	r := rand.New(rand.NewPCG(93, 3))
	var reqs []*core.Request
	for i := range 2000 {
		req := randreq.Request(r)
		if i%3 == 0 {
			randreq.MutateTyped(r, req)
		}
		reqs = append(reqs, req)
	}
	reqs = append(reqs, nil, &core.Request{}, &core.Request{ObservationTemplate: "{observation}", RunMessages: []core.Message{{Role: "user"}}})
	for _, rn := range runners {
		errs := 0
		for i, req := range reqs {
			want, werr := core.Assemble(req)
			got, gerr := rn.Assemble(req)
			sameErr(t, rn.Engine()+": Assemble of request "+strconv.Itoa(i), gerr, werr)
			if werr != nil {
				errs++
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: Assemble of request %d:\n got %+v\nwant %+v (native)", rn.Engine(), i, got, want)
			}
		}
		t.Logf("%s: %d typed requests (%d errors) equal to native", rn.Engine(), len(reqs), errs)
	}
}

func TestTypedValidateTemplateEveryEngine(t *testing.T) {
	r := rand.New(rand.NewPCG(93, 4))
	templates := append([]string{"abc {", "{observation}\xff", "\xed\xa0\x80{observation}", "é😀 {observation!x}", strings.Repeat("😀", 300) + "{"}, randreq.Templates...)
	for range 500 {
		req := &core.Request{ObservationTemplate: randreq.Templates[r.IntN(len(randreq.Templates))]}
		randreq.MutateTyped(r, req)
		templates = append(templates, req.ObservationTemplate)
	}
	for _, rn := range runners {
		for _, tmpl := range templates {
			sameErr(t, rn.Engine()+": ValidateTemplate("+strconv.Quote(tmpl)+")", rn.ValidateTemplate(tmpl), core.ValidateTemplate(tmpl))
		}
		e, ok := rn.ValidateTemplate("abc {").(*core.Error)
		if !ok || e.Path != "observation_template" || e.Offset != 4 {
			t.Fatalf(`%s: ValidateTemplate("abc {") = %#v, want path observation_template offset 4`, rn.Engine(), e)
		}
		t.Logf("%s: %d templates, the same verdict as native", rn.Engine(), len(templates))
	}
}

// NewPrompt and AddStep errors, step by step, equal native ones.
func TestTypedPromptErrorsEveryEngine(t *testing.T) {
	r := rand.New(rand.NewPCG(93, 5))
	for _, rn := range runners {
		for i := range 300 {
			req := randreq.Request(r)
			if i%2 == 0 {
				randreq.MutateTyped(r, req)
			}
			np, nerr := core.NewPrompt(req)
			wp, werr := rn.NewPrompt(req)
			sameErr(t, rn.Engine()+": NewPrompt", werr, nerr)
			if nerr != nil {
				continue
			}
			for range 3 {
				s := core.Step{RawOutput: randreq.Text(r, 10), Observation: randreq.Text(r, 10)}
				if r.IntN(2) == 0 {
					step := &core.Request{Steps: []core.Step{s}}
					randreq.MutateTyped(r, step) // may break the step's texts (or the unused template)
					s = step.Steps[0]
				}
				sameErr(t, rn.Engine()+": AddStep", wp.AddStep(s.RawOutput, s.Observation), np.AddStep(s.RawOutput, s.Observation))
			}
			if !reflect.DeepEqual(wp.Response(), np.Response()) {
				t.Fatalf("%s: Prompt responses differ:\n got %+v\nwant %+v (native)", rn.Engine(), wp.Response(), np.Response())
			}
		}
	}
}
