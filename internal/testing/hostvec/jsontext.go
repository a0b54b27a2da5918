package hostvec

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/vectors"
)

// JSONCase is one JSON-text vector of testdata/json-vectors (the format is in
// its README.md): JSON text and the response every host gives for it.
type JSONCase struct {
	File        string
	Name        string
	Description string
	Text        []byte         // the request as JSON text (any bytes: invalid UTF-8 too)
	Msgpack     []byte         // the msgpack request the text says; nil for a syntax error
	Response    []byte         // the exact response of an ok case; nil otherwise
	Error       *vectors.Error // the error of an error case; nil otherwise
	Syntax      bool           // a JSON syntax error (Error is malformed_request at "")
}

// SyntaxPrefix starts the message of every JSON syntax error.
const SyntaxPrefix = "invalid JSON at byte "

type jsonFile struct {
	Description string `json:"description"`
	Cases       []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Request     string         `json:"request"`
		Msgpack     *string        `json:"msgpack"`
		Response    *string        `json:"response"`
		Error       *vectors.Error `json:"error"`
		Syntax      bool           `json:"syntax"`
	} `json:"cases"`
}

// LoadJSON reads every *.json file of dir (testdata/json-vectors), in name
// order, rejecting unknown keys, repeated names and inconsistent cases.
func LoadJSON(dir string) ([]JSONCase, error) {
	paths, err := vectors.Files(dir)
	if err != nil {
		return nil, err
	}
	var out []JSONCase
	seen := map[string]bool{}
	b64 := func(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var f jsonFile
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, c := range f.Cases {
			if seen[c.Name] {
				return nil, fmt.Errorf("%s: case name %q is used twice", p, c.Name)
			}
			seen[c.Name] = true
			tc := JSONCase{File: filepath.Base(p), Name: c.Name, Description: c.Description, Error: c.Error, Syntax: c.Syntax}
			var errs []error
			var e error
			tc.Text, e = b64(c.Request)
			errs = append(errs, e)
			if c.Msgpack != nil {
				tc.Msgpack, e = b64(*c.Msgpack)
				errs = append(errs, e)
			}
			if c.Response != nil {
				tc.Response, e = b64(*c.Response)
				errs = append(errs, e)
			}
			if err := errors.Join(errs...); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", p, c.Name, err)
			}
			switch {
			case (c.Response == nil) == (c.Error == nil):
				return nil, fmt.Errorf("%s: %s: give exactly one of response and error", p, c.Name)
			case c.Syntax != (c.Msgpack == nil):
				return nil, fmt.Errorf("%s: %s: a syntax-error case has no msgpack, every other case has one", p, c.Name)
			case c.Syntax && (c.Error.Code != string(core.CodeMalformedRequest) || c.Error.Path != ""):
				return nil, fmt.Errorf("%s: %s: a syntax error is malformed_request at \"\"", p, c.Name)
			}
			out = append(out, tc)
		}
	}
	return out, nil
}

// Check reports whether resp, a host's answer to c.Text, is what the case
// expects: the exact bytes of an ok case; for an error case a canonical
// error response with the case's code and path and a message (starting with
// SyntaxPrefix for a syntax error).
func (c JSONCase) Check(resp []byte) error {
	if c.Response != nil {
		if !bytes.Equal(resp, c.Response) {
			return fmt.Errorf("the response differs from the expected %d bytes (got %d bytes: %.200q)", len(c.Response), len(resp), resp)
		}
		return nil
	}
	_, err := core.DecodeResponse(resp)
	var e *core.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("want error %s at %q, got a response that is not an error (%v)", c.Error.Code, c.Error.Path, err)
	}
	if string(e.Code) != c.Error.Code || e.Path != c.Error.Path {
		return fmt.Errorf("want %s at %q, got %s at %q: %s", c.Error.Code, c.Error.Path, e.Code, e.Path, e.Message)
	}
	if e.Message == "" || c.Syntax && !strings.HasPrefix(e.Message, SyntaxPrefix) {
		return fmt.Errorf("the message %q of a %s error does not start with %q", e.Message, e.Code, SyntaxPrefix)
	}
	if canon := core.ErrorResponse(e); !bytes.Equal(canon, resp) {
		return fmt.Errorf("the error response is not canonical:\n got  %x\n want %x", resp, canon)
	}
	return nil
}
