// Package hostvec runs the vector cases that need the core to check them on
// a Go host: the prompt vectors (RunPrompt) and the JSON-text vectors
// (CheckJSON), as internal/testing/vectors loads them; the rules are in each
// set's README.md. It is apart from the loader because the core's own tests
// (package core) import that, and this imports the core.
package hostvec

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/vectors"
	"github.com/polyloop/assembly/wirejson"
)

// Prompt is what the incremental prompt of a Go host offers: core.Prompt and
// wasmhost.Prompt.
type Prompt interface {
	AddStep(rawOutput, observation string) error
	Response() *core.Response
}

// RunPrompt runs one prompt vector (the rules of the README) on the prompt
// newPrompt starts, and returns the first disagreement.
func RunPrompt[P Prompt](c vectors.PromptCase, newPrompt func(*core.Request) (P, error)) error {
	d, err := decodePrompt(c)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	p, err := newPrompt(d.request)
	if err != nil {
		return fmt.Errorf("%s: the prompt refuses the request: %v", c.Name, err)
	}
	want := d.response
	if got := p.Response(); !reflect.DeepEqual(got, want) {
		return fmt.Errorf("%s: the first response:\n got %+v\nwant %+v", c.Name, got, want)
	}
	for i, s := range d.steps {
		err := p.AddStep(s.rawOutput, s.observation)
		if s.err != nil {
			var e *core.Error
			if !errors.As(err, &e) || string(e.Code) != s.err.Code || e.Path != s.err.Path || e.Offset != -1 {
				return fmt.Errorf("%s: step %d: got %#v, want %s at %q", c.Name, i, err, s.err.Code, s.err.Path)
			}
		} else {
			if err != nil {
				return fmt.Errorf("%s: step %d: %v", c.Name, i, err)
			}
			want = s.response
		}
		if got := p.Response(); !reflect.DeepEqual(got, want) {
			return fmt.Errorf("%s: after step %d (%q, %q):\n got %+v\nwant %+v", c.Name, i, s.rawOutput, s.observation, got, want)
		}
	}
	return nil
}

// decodedPrompt is a prompt vector in the core's types.
type decodedPrompt struct {
	request  *core.Request
	response *core.Response
	steps    []decodedStep
}

type decodedStep struct {
	rawOutput, observation string // lone surrogates as their three-byte form
	response               *core.Response
	err                    *vectors.Error
}

// decodePrompt reads c's request as the CLI's JSON reader does and decodes
// its responses.
func decodePrompt(c vectors.PromptCase) (decodedPrompt, error) {
	var d decodedPrompt
	mp, jerr := wirejson.Request(nil, c.Request)
	if jerr != nil {
		return d, jerr
	}
	var err error
	if d.request, err = core.DecodeRequest(mp); err != nil {
		return d, fmt.Errorf("request: %w", err)
	}
	if d.response, err = core.DecodeResponse(c.Response); err != nil {
		return d, fmt.Errorf("response: %w", err)
	}
	for i, s := range c.Steps {
		ds := decodedStep{err: s.Error}
		if ds.rawOutput, err = jsonText(s.RawOutput); err == nil {
			ds.observation, err = jsonText(s.Observation)
		}
		if err == nil && s.Response != nil {
			ds.response, err = core.DecodeResponse(s.Response)
		}
		if err != nil {
			return d, fmt.Errorf("step %d: %w", i, err)
		}
		d.steps = append(d.steps, ds)
	}
	return d, nil
}

// jsonText is the bytes of a JSON string as the CLI's JSON reader gives them
// (a lone surrogate as its three-byte form).
func jsonText(raw []byte) (string, error) {
	mp, err := wirejson.ToMsgpack(nil, raw)
	if err != nil {
		return "", err
	}
	s, _, err := msgp.ReadStringBytes(mp)
	return s, err
}
