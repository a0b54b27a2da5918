package wasmhost

import (
	"errors"
	"strconv"
	"strings"

	"github.com/polyloop/assembly/core"
)

// Prompt is core.Prompt run inside the module: NewPrompt assembles the request
// once; AddStep assembles only the new step (a request holding the template,
// the budget-free step and nothing else) and appends it, so its cost does not
// grow with the history.
type Prompt struct {
	r      *Runner
	tmpl   string
	budget *int64
	resp   *core.Response
	steps  int
	size   core.ResponseSizer
}

// NewPrompt assembles req inside the module.
func (r *Runner) NewPrompt(req *core.Request) (*Prompt, error) {
	resp, err := r.Assemble(req)
	if err != nil {
		return nil, err
	}
	p := &Prompt{r: r, tmpl: req.ObservationTemplate, resp: resp, steps: len(req.Steps), size: core.NewResponseSizer(resp)}
	if req.MaxPromptChars != nil {
		b := *req.MaxPromptChars
		p.budget = &b
	}
	return p, nil
}

// AddStep appends one step, as core.Prompt.AddStep does (too_large when the
// whole response would pass core.MaxResponseBytes).
func (p *Prompt) AddStep(rawOutput, observation string) error {
	one, err := p.r.Assemble(&core.Request{
		Steps:               []core.Step{{RawOutput: rawOutput, Observation: observation}},
		ObservationTemplate: p.tmpl,
	})
	if err != nil {
		var e *core.Error
		if errors.As(err, &e) && strings.HasPrefix(e.Path, "steps[0]") {
			e.Path = "steps[" + strconv.Itoa(p.steps) + "]" + strings.TrimPrefix(e.Path, "steps[0]")
		}
		return err
	}
	// The limit on the whole response, as Assemble of all the steps has it.
	if err := p.size.Add(one.Messages, one.MessageChars); err != nil {
		return err
	}
	r := p.resp
	r.Messages = append(r.Messages, one.Messages...)
	r.MessageChars = append(r.MessageChars, one.MessageChars...)
	r.PromptChars += one.PromptChars
	r.ContextOverflow = p.budget != nil && r.PromptChars > *p.budget
	p.steps++
	return nil
}

// Response returns the prompt so far; it changes with the next AddStep.
func (p *Prompt) Response() *core.Response { return p.resp }
