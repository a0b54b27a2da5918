package vectors

import (
	"encoding/json"
	"fmt"
)

// PromptCase is one prompt vector of testdata/prompt-vectors (format and
// rules in its README.md): a request, its response, and steps added one at a
// time.
type PromptCase struct {
	Name, Description string
	Request           []byte // the request as a JSON object (docs/SPEC.md §2's JSON form)
	Response          []byte // the canonical response bytes to Request
	Steps             []PromptStep
}

// PromptStep is one step of a prompt vector: accepted (Response) or refused
// (Error, without an offset).
type PromptStep struct {
	// RawOutput and Observation are JSON strings as the file has them (a lone
	// surrogate stays its \u escape).
	RawOutput, Observation []byte
	Response               []byte // the canonical response bytes after the step; nil if refused
	Error                  *Error
}

type promptFile struct {
	Description string `json:"description"`
	Cases       []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Request     json.RawMessage `json:"request"`
		Response    string          `json:"response"`
		Steps       []struct {
			RawOutput   json.RawMessage `json:"raw_output"`
			Observation json.RawMessage `json:"observation"`
			Response    *string         `json:"response"`
			Error       *Error          `json:"error"`
		} `json:"steps"`
	} `json:"cases"`
}

// LoadPrompts reads the prompt vectors of file
// (testdata/prompt-vectors/prompts.json), rejecting unknown keys, repeated
// names, steps without exactly one of response and error, and a file
// without cases.
func LoadPrompts(file string) ([]PromptCase, error) {
	var f promptFile
	if err := decodeFile(file, &f); err != nil {
		return nil, err
	}
	var out []PromptCase
	names := names{}
	for _, c := range f.Cases {
		if err := names.add(c.Name); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		pc := PromptCase{Name: c.Name, Description: c.Description, Request: c.Request}
		var err error
		if pc.Response, err = unbase64(c.Response); err != nil {
			return nil, fmt.Errorf("%s: %s: response: %w", file, c.Name, err)
		}
		for i, s := range c.Steps {
			ps := PromptStep{RawOutput: s.RawOutput, Observation: s.Observation, Error: s.Error}
			var err error
			if (s.Response == nil) == (s.Error == nil) {
				err = fmt.Errorf("give exactly one of response and error")
			} else if s.Response != nil {
				ps.Response, err = unbase64(*s.Response)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %s: step %d: %w", file, c.Name, i, err)
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
