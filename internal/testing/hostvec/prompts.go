// Package hostvec loads and runs the vector sets that need the core to read
// them: the prompt vectors (testdata/prompt-vectors) and the JSON-text
// vectors (testdata/json-vectors), each format in its README.md. It is apart
// from internal/testing/vectors, which the core's own tests import.
package hostvec

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/wirejson"
	"github.com/polyloop/assembly/internal/testing/vectors"
)

// PromptCase is one prompt vector of testdata/prompt-vectors (format and
// rules in its README.md): a request, its response, and steps added one at a
// time.
type PromptCase struct {
	Name, Description string
	Request           *core.Request
	Response          *core.Response
	Steps             []PromptStep
}

// PromptStep is one step of a prompt vector: accepted (Response) or refused
// (Error, without an offset).
type PromptStep struct {
	RawOutput, Observation string // lone surrogates as their three-byte form
	Response               *core.Response
	Error                  *vectors.Error
}

// LoadPrompts reads the prompt vectors of file (testdata/prompt-vectors/prompts.json).
func LoadPrompts(file string) ([]PromptCase, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Description string
		Cases       []struct {
			Name, Description string
			Request           json.RawMessage
			Response          string
			Steps             []struct {
				RawOutput   json.RawMessage `json:"raw_output"`
				Observation json.RawMessage `json:"observation"`
				Response    *string         `json:"response"`
				Error       *vectors.Error  `json:"error"`
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	seen := map[string]bool{}
	var out []PromptCase
	for _, c := range doc.Cases {
		if seen[c.Name] {
			return nil, fmt.Errorf("%s: case name %q is used twice", file, c.Name)
		}
		seen[c.Name] = true
		pc := PromptCase{Name: c.Name, Description: c.Description}
		mp, jerr := wirejson.Request(nil, c.Request)
		if jerr != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, jerr)
		}
		if pc.Request, err = core.DecodeRequest(mp); err != nil {
			return nil, fmt.Errorf("%s: request: %w", c.Name, err)
		}
		if pc.Response, err = response(c.Response); err != nil {
			return nil, fmt.Errorf("%s: response: %w", c.Name, err)
		}
		for i, s := range c.Steps {
			ps := PromptStep{Error: s.Error}
			if ps.RawOutput, err = jsonText(s.RawOutput); err == nil {
				ps.Observation, err = jsonText(s.Observation)
			}
			if err == nil && (s.Response == nil) == (s.Error == nil) {
				err = fmt.Errorf("give exactly one of response and error")
			}
			if err == nil && s.Response != nil {
				ps.Response, err = response(*s.Response)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: step %d: %w", c.Name, i, err)
			}
			pc.Steps = append(pc.Steps, ps)
		}
		out = append(out, pc)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no cases", file)
	}
	return out, nil
}

// jsonText is the bytes of a JSON string as the CLI's JSON reader gives them
// (a lone surrogate as its three-byte form).
func jsonText(raw json.RawMessage) (string, error) {
	mp, err := wirejson.ToMsgpack(nil, raw)
	if err != nil {
		return "", err
	}
	s, _, err := msgp.ReadStringBytes(mp)
	return s, err
}

func response(b64 string) (*core.Response, error) {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, err
	}
	return core.DecodeResponse(b)
}

// Prompt is what the incremental prompt of a Go host offers: core.Prompt and
// wasmhost.Prompt.
type Prompt interface {
	AddStep(rawOutput, observation string) error
	Response() *core.Response
}

// RunPrompt runs one prompt vector (the rules of the README) on the prompt
// newPrompt starts, and returns the first disagreement.
func RunPrompt[P Prompt](c PromptCase, newPrompt func(*core.Request) (P, error)) error {
	p, err := newPrompt(c.Request)
	if err != nil {
		return fmt.Errorf("%s: the prompt refuses the request: %v", c.Name, err)
	}
	want := c.Response
	if got := p.Response(); !reflect.DeepEqual(got, want) {
		return fmt.Errorf("%s: the first response:\n got %+v\nwant %+v", c.Name, got, want)
	}
	for i, s := range c.Steps {
		err := p.AddStep(s.RawOutput, s.Observation)
		if s.Error != nil {
			var e *core.Error
			if !errors.As(err, &e) || string(e.Code) != s.Error.Code || e.Path != s.Error.Path || e.Offset != -1 {
				return fmt.Errorf("%s: step %d: got %#v, want %s at %q", c.Name, i, err, s.Error.Code, s.Error.Path)
			}
		} else {
			if err != nil {
				return fmt.Errorf("%s: step %d: %v", c.Name, i, err)
			}
			want = s.Response
		}
		if got := p.Response(); !reflect.DeepEqual(got, want) {
			return fmt.Errorf("%s: after step %d (%q, %q):\n got %+v\nwant %+v", c.Name, i, s.RawOutput, s.Observation, got, want)
		}
	}
	return nil
}
