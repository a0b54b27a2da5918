package core

import (
	"math"
	"slices"
)

// The continuation of the incremental prompt (docs/SPEC.md §7.3, §7.3.1):
// one step appended to a prompt of which only a few numbers are known. It is
// the one rule every host runs: core.Prompt.AddStep on typed values, and the
// wire function AddStepBytes (the module's add_step export), which the
// sandboxed hosts forward to.

// PromptState is what a host holds of an incremental prompt besides its
// messages: the prompt fields of an add_step request and response
// (docs/SPEC.md §7.3.1).
type PromptState struct {
	Steps         int   // steps in the prompt: the index k of the next step
	Messages      int   // messages in the prompt
	PromptChars   int64 // prompt_chars
	ResponseBytes int   // length of the canonical ok response of one assemble of the whole prompt
	// RequestBytes is the length of the canonical encoding of the whole
	// request the prompt stands for, with a steps key (reqsize.go).
	RequestBytes int
}

// next lays out step s (whose texts have rawChars and obsChars code points,
// judged as steps[st.Steps]) in a, whose tmpl is set, and returns the state
// of the prompt with it appended, or too_large when one assemble of the
// whole prompt would answer too_large: its request over MaxRequestBytes
// (checked first, as the wire function does) or its response over
// MaxResponseBytes (docs/SPEC.md §4, §7.3).
func (st PromptState) next(a *assembly, s Step, rawChars, obsChars int) (PromptState, *Error) {
	reqBytes, err := st.grow(len(s.RawOutput), len(s.Observation))
	if err != nil {
		return st, err
	}
	a.msgs, a.promptChars = a.msgs[:0], 0
	a.addStep(s, rawChars, obsChars, 0) // an add_step response shares no texts
	body := okBody(st.ResponseBytes, st.Messages, st.PromptChars)
	for i := range a.msgs {
		body += a.msgs[i].size()
	}
	n, chars := st.Messages+len(a.msgs), addChars(st.PromptChars, a.promptChars)
	size := okSize(body, n, chars)
	if err := checkResponseSize(size); err != nil {
		return st, err
	}
	return PromptState{Steps: st.Steps + 1, Messages: n, PromptChars: chars, ResponseBytes: size, RequestBytes: reqBytes}, nil
}

// overflows reports context_overflow for a prompt of st under budget.
func (st PromptState) overflows(budget *int64) bool {
	return budget != nil && st.PromptChars > *budget
}

// An add_step request is decoded whatever its size (the host holds it
// already): the request limit it answers is that of the whole request it
// stands for (docs/SPEC.md §7.3.1), which its own size does not tell (its
// prompt map takes up to about a hundred bytes more than the steps before).
const addStepSlack = math.MaxInt - MaxRequestBytes

// AddStepBytes is the wire function of the incremental prompt
// (docs/SPEC.md §7.3.1): a msgpack add_step request in, the canonical
// msgpack add_step response (ok or error) out. Like AssembleBytes it never
// panics and never writes to stdout.
func AddStepBytes(request []byte) []byte {
	return appendAddStepBytes(nil, request)
}

// AppendAddStepBytes is AddStepBytes that appends the response to dst and
// returns the extended slice (the WebAssembly module reuses one buffer).
// request must not overlap dst's spare capacity.
func AppendAddStepBytes(dst, request []byte) []byte {
	return appendAddStepBytes(dst, request)
}

func appendAddStepBytes(dst, request []byte) []byte {
	return runWireSlack(dst, request, addStepSlack, func(sc *scratch) ([]byte, *Error) {
		r, err := decodeAddStep(request, sc)
		if err != nil {
			return nil, err
		}
		a := &sc.a
		a.tmpl, a.msgs = r.tmpl, sc.out[:0]
		st, err := r.st.next(a, r.step, r.rawChars, r.obsChars)
		sc.out = a.msgs // so that release clears what was used
		if err != nil {
			return nil, err
		}
		return a.appendAddStep(dst, st, st.overflows(r.budget)), nil
	})
}

// appendAddStep writes the ok add_step response of the messages of a, the
// prompt st after them and its context_overflow.
func (a *assembly) appendAddStep(dst []byte, st PromptState, overflow bool) []byte {
	size := 128 // the keys, headers and numbers
	for i := range a.msgs {
		size += a.msgs[i].encodedSize()
	}
	dst = slices.Grow(dst, size)
	dst = appendHead(dst, 6, true)
	dst = append(dst, keyMessages...)
	dst = appendArrayHeader(dst, len(a.msgs))
	for i := range a.msgs {
		dst = a.appendMessage(dst, &a.msgs[i])
	}
	dst = append(dst, keyMessageChars...)
	dst = appendArrayHeader(dst, len(a.msgs))
	for i := range a.msgs {
		dst = appendUint(dst, uint64(a.msgs[i].chars))
	}
	dst = st.appendPrompt(dst)
	dst = append(dst, keyContextOverflow...)
	return appendBool(dst, overflow)
}

// appendPrompt writes the prompt key and the map of st.
func (st PromptState) appendPrompt(dst []byte) []byte {
	dst = append(dst, keyPrompt...)
	dst = appendMapHeader(dst, len(promptNames))
	dst = append(dst, keySteps...)
	dst = appendUint(dst, uint64(st.Steps))
	dst = append(dst, keyMessages...)
	dst = appendUint(dst, uint64(st.Messages))
	dst = append(dst, keyPromptChars...)
	dst = appendUint(dst, uint64(st.PromptChars))
	dst = append(dst, keyResponseBytes...)
	dst = appendUint(dst, uint64(st.ResponseBytes))
	dst = append(dst, keyRequestBytes...)
	return appendUint(dst, uint64(st.RequestBytes))
}

// promptState is the state of a prompt that starts from req, whose
// assembly a is and whose ok response is size bytes (docs/SPEC.md §7.3.1).
func (a *assembly) promptState(req *Request, size int) PromptState {
	return PromptState{Steps: len(req.Steps), Messages: len(a.msgs), PromptChars: a.promptChars, ResponseBytes: size, RequestBytes: requestSize(req)}
}

// PromptStartBytes is the wire function that starts an incremental prompt
// (docs/SPEC.md §7.3.1), the module's prompt_start export: a msgpack
// assemble request in; out, its assemble response, and when that is ok, with
// a ninth key, prompt, the prompt state add_step continues from, and a
// tenth, segments, its segment ends (the prompt form's, docs/SPEC.md §7.14). Like
// AssembleBytes it never panics and never writes to stdout.
func PromptStartBytes(request []byte) []byte {
	return AppendPromptStartBytes(nil, request)
}

// AppendPromptStartBytes is PromptStartBytes that appends the answer to dst
// and returns the extended slice. request must not overlap dst's spare
// capacity.
func AppendPromptStartBytes(dst, request []byte) []byte {
	return runWire(dst, request, func(sc *scratch) ([]byte, *Error) {
		req, a, size, err := planRequest(request, sc)
		if err != nil {
			return nil, err
		}
		req.Injections = sc.injections() // requestSize reads them; release clears req
		st := a.promptState(req, size)
		dst = slices.Grow(dst, size+192) // the prompt and segments keys and their maps
		dst = st.appendPrompt(a.appendResponse(dst, 10))
		return Segments{a.runEnd, a.injEnd, a.goalEnd}.append(dst), nil
	})
}
