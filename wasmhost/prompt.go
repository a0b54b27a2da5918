package wasmhost

import (
	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
)

// Prompt is core.Prompt run inside the module: NewPrompt assembles the request
// once; AddStep forwards to the module's add_step call (docs/SPEC.md
// §7.3.1), sending the template, the budget, the prompt's state and the step
// and nothing of the history, so its cost does not grow with the history.
// The rule (the steps[k] path, context_overflow, the response limit) is the
// core's; the Prompt holds only what add_step needs and the messages.
type Prompt struct {
	r      *Runner
	tmpl   string
	budget *int64
	st     core.PromptState
	resp   *core.Response
	seg    core.Segments
	// packed is the msgpack of the first packedN messages, kept by Export
	// from call to call.
	packed  []byte
	packedN int
}

// NewPrompt assembles req inside the module.
func (r *Runner) NewPrompt(req *core.Request) (*Prompt, error) {
	if req == nil {
		_, err := core.Assemble(nil) // nothing to encode: core's own error for it
		return nil, err
	}
	b, fail := r.call(abi.CallPromptStart, nil, core.EncodeRequest(req))
	if fail != nil {
		return nil, fail
	}
	resp, st, err := core.DecodePromptStart(b)
	if err != nil {
		return nil, err
	}
	seg, err := core.PromptSegments(b)
	if err != nil {
		return nil, err
	}
	p := &Prompt{r: r, tmpl: req.ObservationTemplate, resp: resp, st: st, seg: seg}
	if req.MaxPromptChars != nil {
		b := *req.MaxPromptChars
		p.budget = &b
	}
	return p, nil
}

// AddStep appends one step, as core.Prompt.AddStep does: the module's
// add_step judges it as steps[k] of the whole request and applies the
// response limit to the whole response. A refused step leaves the prompt
// unchanged.
func (p *Prompt) AddStep(rawOutput, observation string) error {
	req := core.EncodeAddStepRequest(p.tmpl, p.budget, p.st, core.Step{RawOutput: rawOutput, Observation: observation})
	b, fail := p.r.call(abi.CallAddStep, nil, req)
	if fail != nil {
		return fail
	}
	sr, err := core.DecodeStepResponse(b)
	if err != nil {
		return err
	}
	r := p.resp
	r.Messages = append(r.Messages, sr.Messages...)
	r.MessageChars = append(r.MessageChars, sr.MessageChars...)
	r.PromptChars, r.ContextOverflow = sr.Prompt.PromptChars, sr.ContextOverflow
	p.st = sr.Prompt
	return nil
}

// Response returns the prompt so far, as core.Prompt.Response does: a new
// Response whose slices are cut to their length, so that the next AddStep
// never writes into it; the messages are shared (Clone for a copy to edit).
func (p *Prompt) Response() *core.Response { return p.resp.Clip() }

// State is the prompt's state, as the module's prompt_start and add_step
// answered it (docs/SPEC.md §7.3.1).
func (p *Prompt) State() core.PromptState { return p.st }
