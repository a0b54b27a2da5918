// Package vectors loads every shared vector set of testdata for the Go
// tests: the assemble vectors (testdata/vectors, Load), the JSON-text
// vectors (testdata/json-vectors, LoadJSON) and the prompt vectors
// (testdata/prompt-vectors, LoadPrompts); each format is in the set's
// README.md. It gives the cases as the files' bytes and imports no package
// of the module, because the core's own tests (package core) import it;
// internal/testing/hostvec runs the JSON-text and prompt cases on a Go host.
package vectors

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Case is one vector: a request and either the exact response bytes or the
// error code and path.
type Case struct {
	File        string // the file it came from, without directory
	Name        string
	Description string
	Request     []byte
	Response    []byte // nil for an error case
	Error       *Error // nil for an ok case
}

// Error is the expected error of an error case.
type Error struct {
	Code string `json:"code"`
	Path string `json:"path"`
	// Offset is the code-point offset of an invalid_template error, nil for
	// every other code.
	Offset *int `json:"offset"`
}

// WantOffset is the expected core.Error.Offset: the case's offset, or -1.
func (e *Error) WantOffset() int {
	if e.Offset == nil {
		return -1
	}
	return *e.Offset
}

type file struct {
	Description string `json:"description"`
	Cases       []struct {
		Name        string  `json:"name"`
		Description string  `json:"description"`
		Request     string  `json:"request"`
		Response    *string `json:"response"`
		Error       *Error  `json:"error"`
	} `json:"cases"`
}

// Files lists the *.json files of dir in name order; none is an error.
func Files(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err == nil && len(paths) == 0 {
		err = fmt.Errorf("no vector files in %s", dir)
	}
	sort.Strings(paths)
	return paths, err
}

// Load reads every *.json file of dir (testdata/vectors), in name order.
func Load(dir string) ([]Case, error) {
	var out []Case
	names := names{}
	err := eachFile(dir, func(p string, f *file) error {
		for _, c := range f.Cases {
			if err := names.add(c.Name); err != nil {
				return err
			}
			tc := Case{File: filepath.Base(p), Name: c.Name, Description: c.Description, Error: c.Error}
			var err error
			if tc.Request, err = unbase64(c.Request); err != nil {
				return fmt.Errorf("%s: request: %w", c.Name, err)
			}
			if (c.Response == nil) == (c.Error == nil) {
				return fmt.Errorf("%s: give exactly one of response and error", c.Name)
			}
			if c.Response != nil {
				if tc.Response, err = unbase64(*c.Response); err != nil {
					return fmt.Errorf("%s: response: %w", c.Name, err)
				}
			}
			out = append(out, tc)
		}
		return nil
	})
	return out, err
}

// eachFile decodes every *.json file of dir, in name order, into a fresh T
// (unknown keys are an error) and gives it to use; an error of either names
// the file.
func eachFile[T any](dir string, use func(path string, doc *T) error) error {
	paths, err := Files(dir)
	if err != nil {
		return err
	}
	for _, p := range paths {
		var doc T
		if err := decodeFile(p, &doc); err != nil {
			return err
		}
		if err := use(p, &doc); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}

// decodeFile decodes the JSON file path into doc, rejecting unknown keys.
func decodeFile(path string, doc any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// names is the case names of a set so far: each is used once.
type names map[string]bool

func (n names) add(name string) error {
	if n[name] {
		return fmt.Errorf("case name %q is used twice", name)
	}
	n[name] = true
	return nil
}

func unbase64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
