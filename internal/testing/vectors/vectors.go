// Package vectors loads the shared test vectors of testdata/vectors, the one
// set every host runs (see testdata/vectors/README.md for the format).
package vectors

import (
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

// Load reads every *.json file of dir, in name order.
func Load(dir string) ([]Case, error) {
	paths, err := Files(dir)
	if err != nil {
		return nil, err
	}
	var out []Case
	seen := map[string]bool{}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var f file
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, c := range f.Cases {
			if seen[c.Name] {
				return nil, fmt.Errorf("%s: case name %q is used twice", p, c.Name)
			}
			seen[c.Name] = true
			req, err := base64.StdEncoding.DecodeString(c.Request)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: request: %w", p, c.Name, err)
			}
			tc := Case{File: filepath.Base(p), Name: c.Name, Description: c.Description, Request: req, Error: c.Error}
			switch {
			case c.Response != nil && c.Error == nil:
				if tc.Response, err = base64.StdEncoding.DecodeString(*c.Response); err != nil {
					return nil, fmt.Errorf("%s: %s: response: %w", p, c.Name, err)
				}
			case c.Response == nil && c.Error != nil:
			default:
				return nil, fmt.Errorf("%s: %s: give exactly one of response and error", p, c.Name)
			}
			out = append(out, tc)
		}
	}
	return out, nil
}
