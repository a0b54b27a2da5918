package vectors

import (
	"errors"
	"fmt"
	"path/filepath"
)

// JSONCase is one JSON-text vector of testdata/json-vectors (the format is in
// its README.md): JSON text and the response every host gives for it.
type JSONCase struct {
	File        string
	Name        string
	Description string
	Text        []byte // the request as JSON text (any bytes: invalid UTF-8 too)
	Msgpack     []byte // the msgpack request the text says; nil for a syntax error
	Response    []byte // the exact response of an ok case; nil otherwise
	Error       *Error // the error of an error case; nil otherwise
	Syntax      bool   // a JSON syntax error (Error is malformed_request at "")
}

// SyntaxPrefix starts the message of every JSON syntax error.
const SyntaxPrefix = "invalid JSON at byte "

type jsonFile struct {
	Description string `json:"description"`
	Cases       []struct {
		Name        string  `json:"name"`
		Description string  `json:"description"`
		Request     string  `json:"request"`
		Msgpack     *string `json:"msgpack"`
		Response    *string `json:"response"`
		Error       *Error  `json:"error"`
		Syntax      bool    `json:"syntax"`
	} `json:"cases"`
}

// LoadJSON reads every *.json file of dir (testdata/json-vectors), in name
// order, rejecting unknown keys, repeated names and inconsistent cases.
func LoadJSON(dir string) ([]JSONCase, error) {
	var out []JSONCase
	names := names{}
	err := eachFile(dir, func(p string, f *jsonFile) error {
		for _, c := range f.Cases {
			if err := names.add(c.Name); err != nil {
				return err
			}
			tc := JSONCase{File: filepath.Base(p), Name: c.Name, Description: c.Description, Error: c.Error, Syntax: c.Syntax}
			var errs []error
			var e error
			tc.Text, e = unbase64(c.Request)
			errs = append(errs, e)
			if c.Msgpack != nil {
				tc.Msgpack, e = unbase64(*c.Msgpack)
				errs = append(errs, e)
			}
			if c.Response != nil {
				tc.Response, e = unbase64(*c.Response)
				errs = append(errs, e)
			}
			if err := errors.Join(errs...); err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
			switch {
			case (c.Response == nil) == (c.Error == nil):
				return fmt.Errorf("%s: give exactly one of response and error", c.Name)
			case c.Syntax != (c.Msgpack == nil):
				return fmt.Errorf("%s: a syntax-error case has no msgpack, every other case has one", c.Name)
			case c.Syntax && (c.Error.Code != "malformed_request" || c.Error.Path != ""):
				return fmt.Errorf("%s: a syntax error is malformed_request at \"\"", c.Name)
			}
			out = append(out, tc)
		}
		return nil
	})
	return out, err
}
