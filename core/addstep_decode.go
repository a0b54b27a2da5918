package core

import (
	"strconv"

	"github.com/polyloop/assembly/core/msgp"
)

// The strict decoder of an add_step request (docs/SPEC.md §7.3.1), built of
// the request decoder's parts (decode.go): the same forward pass, the same
// codes, messages and paths. The step is judged as steps[k] of an assemble
// request, k being prompt.steps.

// addStepRequest is a decoded add_step request; its strings point into the
// request buffer.
type addStepRequest struct {
	tmpl               *Template
	budget             *int64
	st                 PromptState
	step               Step
	rawChars, obsChars int
}

// Field bits of the add_step request map, in the table order of
// docs/SPEC.md §7.3.1.
const (
	aV = 1 << iota
	aTemplate
	aBudget
	aPrompt
	aStep
)

var addStepFields = "v, observation_template, max_prompt_chars, prompt, step"

func addStepField(key string) uint {
	switch key {
	case "v":
		return aV
	case "observation_template":
		return aTemplate
	case "max_prompt_chars":
		return aBudget
	case "prompt":
		return aPrompt
	case "step":
		return aStep
	}
	return 0
}

// decodeAddStep decodes a whole add_step request into sc (the budget) and
// the returned value.
func decodeAddStep(b []byte, sc *scratch) (*addStepRequest, *Error) {
	r := &addStepRequest{}
	err := decodeTop(b, "", func(b []byte) ([]byte, *Error) { return r.decodeMap(b, sc) })
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (r *addStepRequest) decodeMap(b []byte, sc *scratch) ([]byte, *Error) {
	n, b, err := readMapHeader(b)
	if err != nil {
		return b, err
	}
	var seen uint
	var late []byte // the step, when it came before the prompt
	for i := uint32(0); i < n; i++ {
		var key string
		if key, b, err = readKey(b); err != nil {
			return b, err
		}
		bit := addStepField(key)
		if bit != 0 && seen&bit != 0 {
			return b, duplicateKey(key)
		}
		seen |= bit
		switch bit {
		case aV:
			b, err = decodeVersion(b)
		case aTemplate:
			_, r.tmpl, b, err = decodeTemplate(b)
		case aBudget:
			r.budget, b, err = decodeBudget(b, sc)
		case aPrompt:
			r.st, b, err = decodePromptState(b)
		case aStep:
			if seen&aPrompt != 0 {
				if b, err = r.decodeStep(b); err != nil {
					return b, err // at steps[k], not within step
				}
				continue
			}
			late = b
			b, err = skipValue(b)
		default:
			return b, unknownField(key, "an add_step request", addStepFields)
		}
		if err != nil {
			return b, err.within(fieldSeg(key))
		}
	}
	for _, f := range [...]struct {
		bit  uint
		name string
	}{{aV, "v"}, {aTemplate, "observation_template"}, {aPrompt, "prompt"}, {aStep, "step"}} {
		if seen&f.bit == 0 {
			return b, missingField(f.name, "an add_step request")
		}
	}
	if late != nil {
		_, err = r.decodeStep(late)
	}
	return b, err
}

// decodeStep decodes the step as steps[k] of a request (decode.go's
// fastStep and decodeStep), k being prompt.steps.
func (r *addStepRequest) decodeStep(b []byte) ([]byte, *Error) {
	var err *Error
	s, rawChars, obsChars, rest := fastStep(b)
	if rawChars < 0 {
		if s, rawChars, obsChars, rest, err = decodeStep(b); err != nil {
			if raw, obs, ok := strStepLens(b); ok {
				if _, tooLarge := r.st.grow(raw, obs); tooLarge != nil {
					return b, tooLarge // the whole request's first check (docs/SPEC.md §7.3)
				}
			}
			return b, err.within("steps" + indexSeg(r.st.Steps))
		}
	}
	r.step, r.rawChars, r.obsChars = s, rawChars, obsChars
	return rest, nil
}

// strStepLens reads a step the decoder refused that is still a map of a
// raw_output and an observation str (text not valid UTF-8, say): the
// lengths of the two, whose request size assemble checks before the text.
func strStepLens(b []byte) (raw, obs int, ok bool) {
	n, b, e := msgp.ReadMapHeaderBytes(b)
	if e != nil || n != 2 {
		return 0, 0, false
	}
	var lens [2]int
	seen := 0
	for range 2 {
		var k, v []byte
		if k, b, e = msgp.ReadStringZC(b); e != nil {
			return 0, 0, false
		}
		if v, b, e = msgp.ReadStringZC(b); e != nil {
			return 0, 0, false
		}
		j := map[string]int{"raw_output": 0, "observation": 1}[string(k)] + 1
		if string(k) != "raw_output" && string(k) != "observation" || seen&j != 0 {
			return 0, 0, false
		}
		seen |= j
		lens[j-1] = len(v)
	}
	return lens[0], lens[1], true
}

// skipValue passes over a value whose bytes are whole (the step before the
// prompt: it is judged at the end of the map, once k is known).
func skipValue(b []byte) ([]byte, *Error) {
	rest, e := msgp.Skip(b)
	if e != nil {
		return b, newError(CodeMalformedRequest, "", "this value is broken or cut short; it cannot be read")
	}
	return rest, nil
}

var promptFields = "steps, messages, prompt_chars, response_bytes, request_bytes"

// decodePromptState decodes the prompt map: five ints ≥ 0, then checked
// against each other (PromptState.check).
func decodePromptState(b []byte) (PromptState, []byte, *Error) {
	var st PromptState
	n, b, err := readMapHeader(b)
	if err != nil {
		return st, b, err
	}
	var v [len(promptNames)]int64
	var seen uint
	for i := uint32(0); i < n; i++ {
		var key string
		if key, b, err = readKey(b); err != nil {
			return st, b, err
		}
		j := promptField(key)
		if j < 0 {
			return st, b, unknownField(key, "prompt", promptFields)
		}
		if seen&(1<<j) != 0 {
			return st, b, duplicateKey(key)
		}
		seen |= 1 << j
		if v[j], b, err = readCount(b); err != nil {
			return st, b, err.within(fieldSeg(key))
		}
	}
	for j, name := range promptNames {
		if seen&(1<<j) == 0 {
			return st, b, missingField(name, "prompt")
		}
	}
	st = PromptState{Steps: int(v[0]), Messages: int(v[1]), PromptChars: v[2], ResponseBytes: int(v[3]), RequestBytes: int(v[4])}
	return st, b, st.check()
}

func promptField(key string) int {
	switch key {
	case "steps":
		return 0
	case "messages":
		return 1
	case "prompt_chars":
		return 2
	case "response_bytes":
		return 3
	case "request_bytes":
		return 4
	}
	return -1
}

// readCount reads an int ≥ 0 of the prompt map.
func readCount(b []byte) (int64, []byte, *Error) {
	v, big, rest, err := readInt(b)
	if err == nil && (big || v < 0) {
		err = newError(CodeMalformedRequest, "", "this count is "+intText(v, big)+"; send the value the last add_step (or the assemble) answered")
	}
	return v, rest, err
}

// check refuses a state no prompt has: a response over the limit, fewer
// than two messages per step, fewer bytes than its messages and code
// points take (each message at least minMessageSize, each code point at
// least a byte), or a request over the limit (plus the empty steps key a
// request without steps is counted with) or smaller than its steps.
func (st PromptState) check() *Error {
	b, q := int64(st.ResponseBytes), int64(st.RequestBytes)
	ok := b <= int64(maxResponse) && int64(st.Messages) <= b && st.PromptChars <= b &&
		int64(st.Steps) <= int64(st.Messages)/2 &&
		q <= int64(maxRequest+emptyStepsSize) && q >= int64(st.Steps)*int64(stepSize(0, 0))
	if ok {
		least := okSize(fixedSize(nil)+st.Messages*minMessageSize()+int(st.PromptChars), st.Messages, st.PromptChars)
		ok = st.ResponseBytes >= least
	}
	if ok {
		return nil
	}
	return newError(CodeMalformedRequest, "", "no prompt has "+strconv.Itoa(st.Steps)+" steps, "+strconv.Itoa(st.Messages)+
		" messages, "+strconv.FormatInt(st.PromptChars, 10)+" code points, a "+strconv.Itoa(st.ResponseBytes)+
		"-byte response and a "+strconv.Itoa(st.RequestBytes)+"-byte request; send the prompt fields the last add_step (or the assemble) answered")
}
