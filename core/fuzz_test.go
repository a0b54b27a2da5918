package core

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
)

// FuzzAssembleBytes: AssembleBytes never panics and never answers internal;
// every answer is a canonical response; an ok request, decoded and encoded
// again canonically, assembles to the same bytes, and Assemble on the typed
// request agrees with it.
func FuzzAssembleBytes(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 8 {
		f.Add(EncodeRequest(seedRequest(r)))
	}
	f.Fuzz(func(t *testing.T, req []byte) {
		resp := AssembleBytes(req)
		if err := checkCanonicalResponse(resp); err != nil {
			t.Fatalf("not a canonical response: %v\n%x", err, resp)
		}
		typed, err := DecodeResponse(resp)
		if err != nil {
			if e := err.(*Error); e.Code == CodeInternal {
				t.Fatalf("internal error: %s", e.Message)
			}
			return
		}
		dec, err := DecodeRequest(req)
		if err != nil {
			t.Fatalf("the request assembled but does not decode: %v", err)
		}
		again := AssembleBytes(EncodeRequest(dec))
		if !bytes.Equal(again, resp) {
			t.Fatalf("re-encoding the request changed the response")
		}
		viaTyped, err := Assemble(dec)
		if err != nil {
			t.Fatalf("Assemble refuses what AssembleBytes accepted: %v", err)
		}
		if !sameResponse(viaTyped, typed) {
			t.Fatalf("Assemble and AssembleBytes disagree")
		}
	})
}

func seedRequest(r *rand.Rand) *Request {
	text := func() string {
		const pool = "ab {}!r:<>é漢😀\x00\n\"'\\"
		rs := []rune(pool)
		n := r.IntN(12)
		out := make([]rune, n)
		for i := range out {
			out[i] = rs[r.IntN(len(rs))]
		}
		return string(out)
	}
	req := &Request{ObservationTemplate: []string{"{observation}", "{observation!r:>9}", "Output:\n{observation}\n"}[r.IntN(3)]}
	for range r.IntN(3) {
		req.RunMessages = append(req.RunMessages, Message{Role: "user", Content: []Block{{Type: "text", Text: text()}}})
	}
	if r.IntN(2) == 0 {
		req.Injections = map[string][]Injection{text(): {{EntryID: "e1", Content: text()}}}
	}
	for range r.IntN(3) {
		req.Steps = append(req.Steps, Step{RawOutput: text(), Observation: text()})
	}
	if r.IntN(2) == 0 {
		b := int64(r.IntN(50))
		req.MaxPromptChars = &b
	}
	return req
}

func sameResponse(a, b *Response) bool {
	if len(a.Messages) != len(b.Messages) || a.PromptChars != b.PromptChars || a.ContextOverflow != b.ContextOverflow || a.PrefixDigests != b.PrefixDigests || len(a.Injected) != len(b.Injected) {
		return false
	}
	for i := range a.Messages {
		if a.Messages[i].Role != b.Messages[i].Role || len(a.Messages[i].Content) != len(b.Messages[i].Content) || a.MessageChars[i] != b.MessageChars[i] {
			return false
		}
		for j := range a.Messages[i].Content {
			if a.Messages[i].Content[j] != b.Messages[i].Content[j] {
				return false
			}
		}
	}
	for i := range a.Injected {
		if a.Injected[i] != b.Injected[i] {
			return false
		}
	}
	return true
}

// ---- an independent check of the canonical encoding ----

// The key sequences of each map of a response, by schema name.
var responseSchemas = map[string][]string{
	"ok":       {"v", "ok", "messages", "message_chars", "prompt_chars", "context_overflow", "injected", "prefix_digests"},
	"error":    {"v", "ok", "error"},
	"errorMap": {"code", "message", "path"},
	// an invalid_template error carries the offset (docs/SPEC.md §6)
	"templateErrorMap": {"code", "message", "path", "offset"},
	"message":          {"role", "content"},
	"block":            {"type", "text"},
	"injected":         {"channel", "entry_id", "message_index"},
	"digests":          {"run", "injections", "goal"},
}

type canon struct {
	b []byte
}

var errCanon = errors.New("not canonical")

func (c *canon) byte1() (byte, error) {
	if len(c.b) == 0 {
		return 0, errors.New("ends early")
	}
	x := c.b[0]
	c.b = c.b[1:]
	return x, nil
}

func (c *canon) take(n int) ([]byte, error) {
	if len(c.b) < n {
		return nil, errors.New("ends early")
	}
	x := c.b[:n]
	c.b = c.b[n:]
	return x, nil
}

// header reads a shortest-form map (base 0x80, 0xde) or array (0x90, 0xdc)
// header.
func (c *canon) header(fix, h16 byte) (int, error) {
	x, err := c.byte1()
	if err != nil {
		return 0, err
	}
	switch {
	case x&0xf0 == fix:
		return int(x & 0x0f), nil
	case x == h16:
		b, err := c.take(2)
		if err != nil {
			return 0, err
		}
		n := int(binary.BigEndian.Uint16(b))
		if n <= 15 {
			return 0, errCanon
		}
		return n, nil
	case x == h16+1:
		b, err := c.take(4)
		if err != nil {
			return 0, err
		}
		n := int(binary.BigEndian.Uint32(b))
		if n <= 0xffff {
			return 0, errCanon
		}
		return n, nil
	}
	return 0, errors.New("unexpected type")
}

func (c *canon) str() (string, error) {
	x, err := c.byte1()
	if err != nil {
		return "", err
	}
	var n int
	switch {
	case x >= 0xa0 && x <= 0xbf:
		n = int(x & 0x1f)
	case x == 0xd9:
		b, err := c.take(1)
		if err != nil {
			return "", err
		}
		if n = int(b[0]); n <= 31 {
			return "", errCanon
		}
	case x == 0xda:
		b, err := c.take(2)
		if err != nil {
			return "", err
		}
		if n = int(binary.BigEndian.Uint16(b)); n <= 0xff {
			return "", errCanon
		}
	case x == 0xdb:
		b, err := c.take(4)
		if err != nil {
			return "", err
		}
		if n = int(binary.BigEndian.Uint32(b)); n <= 0xffff {
			return "", errCanon
		}
	default:
		return "", errors.New("expected a str")
	}
	s, err := c.take(n)
	return string(s), err
}

func (c *canon) uint() (uint64, error) {
	x, err := c.byte1()
	if err != nil {
		return 0, err
	}
	if x <= 0x7f {
		return uint64(x), nil
	}
	sizes := map[byte]int{0xcc: 1, 0xcd: 2, 0xce: 4, 0xcf: 8}
	n, ok := sizes[x]
	if !ok {
		return 0, errors.New("expected a non-negative int")
	}
	b, err := c.take(n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, d := range b {
		v = v<<8 | uint64(d)
	}
	lim := map[int]uint64{1: 0x7f, 2: 0xff, 4: 0xffff, 8: 0xffffffff}[n]
	if v <= lim {
		return 0, errCanon
	}
	return v, nil
}

func (c *canon) bool() error {
	x, err := c.byte1()
	if err == nil && x != 0xc2 && x != 0xc3 {
		err = errors.New("expected a bool")
	}
	return err
}

func (c *canon) mapOf(schema string, value func(key string) error) error {
	n, err := c.header(0x80, 0xde)
	if err != nil {
		return err
	}
	keys := responseSchemas[schema]
	if n != len(keys) {
		return errors.New(schema + ": wrong number of keys")
	}
	for _, want := range keys {
		k, err := c.str()
		if err != nil {
			return err
		}
		if k != want {
			return errors.New(schema + ": key " + k + " where " + want + " belongs")
		}
		if err := value(k); err != nil {
			return err
		}
	}
	return nil
}

func (c *canon) arrayOf(each func() error) error {
	n, err := c.header(0x90, 0xdc)
	if err != nil {
		return err
	}
	for range n {
		if err := each(); err != nil {
			return err
		}
	}
	return nil
}

// errorMap checks {code, message, path}, or {code, message, path, offset}
// exactly when code is invalid_template.
func (c *canon) errorMap() error {
	schema := "errorMap"
	if len(c.b) > 0 && c.b[0] == 0x84 {
		schema = "templateErrorMap"
	}
	var code string
	err := c.mapOf(schema, func(k string) error {
		if k == "offset" {
			_, err := c.uint()
			return err
		}
		s, err := c.str()
		if k == "code" {
			code = s
		}
		return err
	})
	if err == nil && (schema == "templateErrorMap") != (code == string(CodeInvalidTemplate)) {
		err = errors.New("error " + code + " with schema " + schema + ": an offset exactly for invalid_template")
	}
	return err
}

func checkCanonicalResponse(b []byte) error {
	if len(b) < 8 {
		return errors.New("too short")
	}
	schema := "ok"
	if b[7] == 0xc2 {
		schema = "error"
	}
	c := &canon{b: b}
	strOnly := func(string) error { _, err := c.str(); return err }
	err := c.mapOf(schema, func(k string) error {
		switch k {
		case "v":
			v, err := c.uint()
			if err == nil && v != 1 {
				err = errors.New("v is not 1")
			}
			return err
		case "ok", "context_overflow":
			return c.bool()
		case "error":
			return c.errorMap()
		case "messages":
			return c.arrayOf(func() error {
				return c.mapOf("message", func(k string) error {
					if k == "role" {
						_, err := c.str()
						return err
					}
					return c.arrayOf(func() error { return c.mapOf("block", strOnly) })
				})
			})
		case "message_chars":
			return c.arrayOf(func() error { _, err := c.uint(); return err })
		case "prompt_chars":
			_, err := c.uint()
			return err
		case "injected":
			return c.arrayOf(func() error {
				return c.mapOf("injected", func(k string) error {
					if k == "message_index" {
						_, err := c.uint()
						return err
					}
					_, err := c.str()
					return err
				})
			})
		case "prefix_digests":
			return c.mapOf("digests", strOnly)
		}
		return errors.New("unexpected key")
	})
	if err == nil && len(c.b) != 0 {
		err = errors.New("trailing bytes")
	}
	return err
}

func TestCanonicalCheckerRejects(t *testing.T) {
	good := AssembleBytes(EncodeRequest(&Request{ObservationTemplate: "{observation}", Steps: []Step{{RawOutput: "a", Observation: "b"}}}))
	if err := checkCanonicalResponse(good); err != nil {
		t.Fatalf("a real response fails the checker: %v", err)
	}
	// v as uint8 instead of a fixint: not canonical.
	bad := append([]byte{good[0], good[1], good[2], 0xcc, 0x01}, good[4:]...)
	if checkCanonicalResponse(bad) == nil {
		t.Fatal("the checker accepts a non-shortest int")
	}
	if checkCanonicalResponse(good[:len(good)-1]) == nil {
		t.Fatal("the checker accepts a cut response")
	}
}
