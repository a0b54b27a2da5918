package core

// Prompt is the incremental form of Assemble for agent loops that call the
// model once per step with a growing history. NewPrompt assembles the request
// once; AddStep appends one step at a cost independent of the history held.
//
// After k calls to AddStep, Response equals the Response of Assemble on the
// request with those k steps appended: messages, message chars, prompt chars,
// context overflow, injected entries and prefix digests (history is not part of
// any digest, so they never change). The response limit applies alike: the
// AddStep whose step would take the wire response over MaxResponseBytes fails
// with too_large, as Assemble of those steps does.
//
// A Prompt is not safe for concurrent use.
type Prompt struct {
	tmpl   *Template
	budget *int64
	resp   *Response
	st     PromptState
	// emptyText is the rendering of an empty observation, once made.
	emptyText *string
}

// NewPrompt checks and assembles req, as Assemble does.
func NewPrompt(req *Request) (*Prompt, error) {
	sc := getScratch()
	defer sc.release()
	a, err := checkAndBuild(req, sc)
	if err != nil {
		return nil, err
	}
	size, serr := a.encodedSize()
	if serr != nil {
		return nil, serr
	}
	resp, rerr := a.response()
	if rerr != nil {
		return nil, rerr
	}
	p := &Prompt{tmpl: a.tmpl, resp: resp, emptyText: a.emptyText,
		st: PromptState{Steps: len(req.Steps), Messages: len(a.msgs), PromptChars: a.promptChars, ResponseBytes: size}}
	if req.MaxPromptChars != nil {
		b := *req.MaxPromptChars
		p.budget = &b
	}
	return p, nil
}

// AddStep appends one completed step: an assistant message with rawOutput and
// a user message with the observation rendered through the template. Text that
// is not valid UTF-8 is an *Error with code invalid_utf8 and the step's path
// (steps[k].raw_output or steps[k].observation); a step that would take the
// response over MaxResponseBytes is too_large at "". The prompt is then
// unchanged. The rule is AddStepBytes's (docs/SPEC.md §7.3.1).
func (p *Prompt) AddStep(rawOutput, observation string) error {
	s := Step{RawOutput: rawOutput, Observation: observation}
	rawChars, obsChars, err := checkStep(s, p.st.Steps)
	if err != nil {
		return err
	}
	a := &assembly{tmpl: p.tmpl, emptyText: p.emptyText}
	st, err := p.st.next(a, s, rawChars, obsChars)
	if err != nil {
		return err
	}
	r := p.resp
	for i := range a.msgs {
		m := &a.msgs[i]
		r.Messages = append(r.Messages, a.message(m))
		r.MessageChars = append(r.MessageChars, m.chars)
	}
	p.st, p.emptyText = st, a.emptyText
	r.PromptChars, r.ContextOverflow = st.PromptChars, st.overflows(p.budget)
	return nil
}

// Response returns the assembled prompt so far. The Response is owned by the
// Prompt and changes with the next AddStep; copy what you keep.
func (p *Prompt) Response() *Response { return p.resp }
