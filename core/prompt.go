package core

import "slices"

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
	seg    Segments
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
		st: a.promptState(req, size), seg: Segments{a.runEnd, a.injEnd, a.goalEnd}}
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
// unchanged. A step that would take the whole request over MaxRequestBytes
// is too_large at "" with the request's message and size, checked first as
// the wire function checks the request's size first. The rule is
// AddStepBytes's (docs/SPEC.md §7.3.1).
func (p *Prompt) AddStep(rawOutput, observation string) error {
	s := Step{RawOutput: rawOutput, Observation: observation}
	if _, err := p.st.grow(len(rawOutput), len(observation)); err != nil {
		return err // the whole request's size is checked before its text
	}
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

// Response returns the assembled prompt so far: a new Response whose slices
// are the Prompt's own, cut to their length and capacity, so that the next
// AddStep never writes into what was returned (its appends go to new
// arrays). The Messages and their Content blocks are shared: editing an
// element (msgs[0].Content[0].Text = ...) edits the Prompt's; call
// Response().Clone() for a copy to edit (docs/SPEC.md §7.3).
func (p *Prompt) Response() *Response { return p.resp.Clip() }

// Segments are where the prompt's run, injections and goal end.
func (p *Prompt) Segments() Segments { return p.seg }

// State is the prompt's state (docs/SPEC.md §7.3.1): what add_step is sent.
func (p *Prompt) State() PromptState { return p.st }

// Clip returns a new Response of r's values whose slices are cut to their
// length and capacity: appending to them, or setting its fields, leaves r as
// it is (their elements are r's). It costs one small allocation.
func (r *Response) Clip() *Response {
	v := *r
	v.Messages, v.MessageChars, v.Injected = slices.Clip(r.Messages), slices.Clip(r.MessageChars), slices.Clip(r.Injected)
	return &v
}

// Clone returns a deep copy of r: new slices of Messages (each with its own
// Content), MessageChars and Injected, so that editing any of it leaves r
// as it is (strings are immutable and shared). It costs one allocation per
// message.
func (r *Response) Clone() *Response {
	c := *r
	c.Messages = make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		c.Messages[i] = Message{Role: m.Role, Content: slices.Clone(m.Content)}
	}
	c.MessageChars, c.Injected = slices.Clone(r.MessageChars), slices.Clone(r.Injected)
	return &c
}
