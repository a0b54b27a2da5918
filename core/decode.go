package core

import (
	"strconv"
	"strings"
	"unsafe"

	"github.com/polyloop/assembly/core/msgp"
)

// This file is the strict wire decoder of docs/SPEC.md §2 (§2.1 the order of checks):
// one forward pass over the bytes, the first problem wins. Strings are not
// copied: they point into the request buffer, which the caller must leave
// untouched until the response is built.
//
// Paths are built only on failure: each level returns an error whose Path is
// relative to the value it decoded, and the caller prepends its own segment.

// textCounts holds the code points of the texts the decoder validated (it
// counts them in the same pass), so that assembling does not read them again.
type textCounts struct {
	run, goal []int // one per content block of run_messages, goal_messages, in order
	steps     []int // raw_output and observation of each step, in order
}

// decodeRequest decodes a whole request, trailing bytes included, into sc
// and returns it with its parsed template; sc.tc then holds the code points
// of its texts. Everything it returns lives in sc (see scratch.go).
func decodeRequest(b []byte, sc *scratch) (*Request, *Template, *Error) {
	var req *Request
	var tmpl *Template
	err := decodeTop(b, jsonHint, func(b []byte) (rest []byte, err *Error) {
		req, tmpl, rest, err = decodeRequestMap(b, sc)
		return rest, err
	})
	if err != nil {
		return nil, nil, err
	}
	return req, tmpl, nil
}

// planPrefix plans the request map at the start of b, in sc, and returns
// the bytes after it: a request inside a call's arguments, read without
// walking it twice. Its errors are those of planRequest on the map's
// bytes alone.
func planPrefix(b []byte, sc *scratch) (*assembly, []byte, *Error) {
	var req *Request
	var tmpl *Template
	rest, err := decodeTopRest(b, jsonHint, func(b []byte) (rest []byte, err *Error) {
		req, tmpl, rest, err = decodeRequestMap(b, sc)
		return rest, err
	})
	if err != nil {
		return nil, b, err
	}
	a := build(req, tmpl, sc)
	if _, err = a.encodedSize(); err != nil {
		return nil, b, err
	}
	return a, rest, nil
}

// jsonHint ends the message of a request that is not a map but looks like
// JSON text handed to a msgpack entry point (a str or bin, or bytes that start
// as JSON does: see looksLikeJSON). Messages are the same in every host
// (docs/SPEC.md §6), so it names the JSON entry point of each.
const jsonHint = "; to assemble JSON text, call assemble_json (Python), assembleJSON (JavaScript) or Runner.AssembleJSON (Go), or run polyloop-assemble --in json"

// decodeTop runs decodeMap on a whole request, which must be one msgpack
// map and nothing after it; paths lose their leading dot (docs/SPEC.md
// §2.2). hint ends the message of a top-level value that looksLikeJSON
// ("" for a request no person writes, as add_step's).
func decodeTop(b []byte, hint string, decodeMap func([]byte) ([]byte, *Error)) *Error {
	rest, err := decodeTopRest(b, hint, decodeMap)
	if err == nil && len(rest) != 0 {
		return newError(CodeMalformedRequest, "", strconv.Itoa(len(rest))+" trailing bytes after the request; send exactly one request")
	}
	return err
}

// decodeTopRest is decodeTop with the bytes after the map returned.
func decodeTopRest(b []byte, hint string, decodeMap func([]byte) ([]byte, *Error)) ([]byte, *Error) {
	if len(b) == 0 {
		return b, newError(CodeMalformedRequest, "", "the request is empty; send one "+w().Request)
	}
	if msgp.NextType(b) != msgp.MapType {
		if e := unreadableError(b); e != nil {
			return b, e
		}
		if !looksLikeJSON(b) {
			hint = ""
		}
		return b, newError(CodeMalformedRequest, "", "the request must be "+w().Request+", found "+topTypeName(b)+hint)
	}
	rest, err := decodeMap(b)
	if err != nil {
		err.Path = trimDot(err.Path)
		return b, err
	}
	return rest, nil
}

// looksLikeJSON reports whether a top-level value that is not a map is
// likely JSON text: a str or bin (the text passed as a string or bytes), or
// a first byte JSON text starts with ('{', '[' or JSON whitespace, each a
// msgpack positive fixint).
func looksLikeJSON(b []byte) bool {
	switch b[0] {
	case '{', '[', ' ', '\t', '\n', '\r':
		return true
	}
	t := msgp.NextType(b)
	return t == msgp.StrType || t == msgp.BinType
}

// topTypeName is typeName, naming also the character of a fixint that JSON
// text starts with ('{' is the int 123 to msgpack).
func topTypeName(b []byte) string {
	if b[0] < 0x80 && looksLikeJSON(b) {
		return "an int (the byte " + strconv.QuoteRune(rune(b[0])) + ")"
	}
	return typeName(b)
}

func trimDot(p string) string {
	if len(p) > 0 && p[0] == '.' {
		return p[1:]
	}
	return p
}

// Field bits of the request map, in the table order of docs/SPEC.md.
const (
	fV = 1 << iota
	fRunMessages
	fInjections
	fGoalMessages
	fSteps
	fTemplate
	fBudget
)

var requestFields = "v, run_messages, injections, goal_messages, steps, observation_template, max_prompt_chars"

func decodeRequestMap(b []byte, sc *scratch) (*Request, *Template, []byte, *Error) {
	n, b, err := readMapHeader(b)
	if err != nil {
		return nil, nil, b, err
	}
	req, tc := &sc.req, &sc.tc
	var tmpl *Template
	var seen uint
	for i := uint32(0); i < n; i++ {
		key, bit, rest, err := requestKey(b)
		if err != nil {
			return nil, nil, rest, err
		}
		b = rest
		if bit != 0 && seen&bit != 0 {
			return nil, nil, b, duplicateKey(key)
		}
		seen |= bit
		switch bit {
		case fV:
			b, err = decodeVersion(b)
		case fRunMessages:
			req.RunMessages, b, err = decodeMessages(b, &tc.run, sc)
		case fInjections:
			b, err = decodeInjections(b, sc)
		case fGoalMessages:
			req.GoalMessages, b, err = decodeMessages(b, &tc.goal, sc)
		case fSteps:
			req.Steps, b, err = decodeSteps(b, &tc.steps, sc)
		case fTemplate:
			req.ObservationTemplate, tmpl, b, err = decodeTemplate(b)
		case fBudget:
			req.MaxPromptChars, b, err = decodeBudget(b, sc)
		default:
			return nil, nil, b, unknownField(key, "the request", requestFields)
		}
		if err != nil {
			return nil, nil, b, err.within(fieldSeg(key))
		}
	}
	if seen&fTemplate == 0 {
		return nil, nil, b, missingField("observation_template", "the request")
	}
	return req, tmpl, b, nil
}

// requestKeys are the fields of the request map, encoded.
var requestKeys = func() (ks [7]struct {
	enc, name string
	bit       uint
}) {
	for i, name := range strings.Split(requestFields, ", ") {
		ks[i].enc, ks[i].name, ks[i].bit = key(name), name, requestField(name)
	}
	return ks
}()

// requestKey reads a key of the request map and returns it with its field
// bit (0 for an unknown key). A field's name is matched in its encoding
// (the fixstr readKey would read), with one comparison and no call to
// readKey; anything else is read by readKey. An error is readKey's.
func requestKey(b []byte) (string, uint, []byte, *Error) {
	if len(b) > 0 {
		for i := range requestKeys {
			k := &requestKeys[i]
			if b[0] == k.enc[0] && len(b) >= len(k.enc) && equalText(unsafe.String(&b[0], len(k.enc)), k.enc) {
				return k.name, k.bit, b[len(k.enc):], nil
			}
		}
	}
	key, rest, err := readKey(b)
	if err != nil {
		return "", 0, rest, err
	}
	return key, requestField(key), rest, nil
}

// requestField is the field bit of a key of the request map, 0 for an
// unknown key.
func requestField(key string) uint {
	switch key {
	case "v":
		return fV
	case "run_messages":
		return fRunMessages
	case "injections":
		return fInjections
	case "goal_messages":
		return fGoalMessages
	case "steps":
		return fSteps
	case "observation_template":
		return fTemplate
	case "max_prompt_chars":
		return fBudget
	}
	return 0
}

// decodeTemplate decodes observation_template: a str, parsed (docs/SPEC.md
// §5).
func decodeTemplate(b []byte) (string, *Template, []byte, *Error) {
	s, b, err := readStr(b)
	if err != nil {
		return "", nil, b, err
	}
	tmpl, err := parseTemplateCached(s)
	return s, tmpl, b, err
}

func decodeVersion(b []byte) ([]byte, *Error) {
	v, big, b, err := readInt(b)
	if err == nil && (big || v != WireVersion) {
		err = newError(CodeUnsupportedVersion, "", "wire version "+intText(v, big)+" is not supported; this library speaks version 1")
	}
	return b, err
}

// decodeBudget decodes max_prompt_chars: nil, or an int ≥ 0 (one above the
// int64 range is above any prompt), kept in sc.budget.
func decodeBudget(b []byte, sc *scratch) (*int64, []byte, *Error) {
	if len(b) > 0 && msgp.NextType(b) == msgp.NilType {
		return nil, b[1:], nil
	}
	v, big, b, err := readInt(b)
	if err != nil {
		return nil, b, err
	}
	if v < 0 {
		return nil, b, newError(CodeInvalidBudget, "", "max_prompt_chars is "+strconv.FormatInt(v, 10)+"; give a budget of 0 or more code points, or "+w().NoBudget+" for no budget")
	}
	if big {
		v = 1<<63 - 1 // above any possible prompt
	}
	sc.budget = v
	return &sc.budget, b, nil
}

func decodeMessages(b []byte, counts *[]int, sc *scratch) ([]Message, []byte, *Error) {
	n, b, err := readArrayHeader(b)
	if err != nil {
		return nil, b, err
	}
	msgs := reserve(&sc.msgs, hint(n, len(b), 16))
	for i := 0; i < int(n); i++ {
		var m Message
		m, b, err = decodeMessage(b, counts, sc)
		if err != nil {
			return nil, b, err.within(indexSeg(i))
		}
		msgs = append(msgs, m)
	}
	return msgs, b, nil
}

func decodeMessage(b []byte, counts *[]int, sc *scratch) (Message, []byte, *Error) {
	if m, rest, ok, err := fastMessage(b, counts, sc); ok {
		return m, rest, err
	}
	var m Message
	n, b, err := readMapHeader(b)
	if err != nil {
		return m, b, err
	}
	const fRole, fContent = 1, 2
	var seen uint
	for i := uint32(0); i < n; i++ {
		var key string
		key, b, err = readKey(b)
		if err != nil {
			return m, b, err
		}
		switch key {
		case "role":
			if seen&fRole != 0 {
				return m, b, duplicateKey(key)
			}
			seen |= fRole
			m.Role, b, err = readStr(b)
			if err == nil && !validRole(m.Role) {
				err = newError(CodeInvalidRole, "", "role "+quote(m.Role)+" is not one of system, user, assistant")
			}
		case "content":
			if seen&fContent != 0 {
				return m, b, duplicateKey(key)
			}
			seen |= fContent
			m.Content, b, err = decodeBlocks(b, counts, sc)
		default:
			return m, b, unknownField(key, "a message", "role, content")
		}
		if err != nil {
			return m, b, err.within(fieldSeg(key))
		}
	}
	if seen&fRole == 0 {
		return m, b, missingField("role", "a message")
	}
	if seen&fContent == 0 {
		return m, b, missingField("content", "a message")
	}
	return m, b, nil
}

func validRole(r string) bool {
	return r == RoleUser || r == RoleAssistant || r == RoleSystem
}

func decodeBlocks(b []byte, counts *[]int, sc *scratch) ([]Block, []byte, *Error) {
	n, b, err := readArrayHeader(b)
	if err != nil {
		return nil, b, err
	}
	blocks := reserve(&sc.blocks, hint(n, len(b), 16))
	for i := 0; i < int(n); i++ {
		var blk Block
		var chars int
		if blk, chars, b = fastBlock(b); chars < 0 {
			blk, chars, b, err = decodeBlock(b)
			if err != nil {
				return nil, b, err.within(indexSeg(i))
			}
		}
		blocks = append(blocks, blk)
		*counts = append(*counts, chars)
	}
	return blocks, b, nil
}

func decodeBlock(b []byte) (blk Block, chars int, _ []byte, _ *Error) {
	n, b, err := readMapHeader(b)
	if err != nil {
		return blk, 0, b, err
	}
	const fType, fText = 1, 2
	var seen uint
	for i := uint32(0); i < n; i++ {
		var key string
		key, b, err = readKey(b)
		if err != nil {
			return blk, chars, b, err
		}
		switch key {
		case "type":
			if seen&fType != 0 {
				return blk, chars, b, duplicateKey(key)
			}
			seen |= fType
			blk.Type, b, err = readStr(b)
			if err == nil && blk.Type != BlockTypeText {
				err = unknownBlockType(blk.Type)
			}
		case "text":
			if seen&fText != 0 {
				return blk, chars, b, duplicateKey(key)
			}
			seen |= fText
			blk.Text, chars, b, err = readStrN(b)
		default:
			return blk, chars, b, unknownField(key, "a text block", "type, text")
		}
		if err != nil {
			return blk, chars, b, err.within(fieldSeg(key))
		}
	}
	if seen&fType == 0 {
		return blk, chars, b, missingField("type", "a content block")
	}
	if seen&fText == 0 {
		return blk, chars, b, missingField("text", "a text block")
	}
	return blk, chars, b, nil
}

func unknownBlockType(t string) *Error {
	return newError(CodeUnknownBlockType, "", "block type "+quote(t)+" is unknown; wire version 1 has only \"text\" blocks")
}

// decodeInjections decodes injections into sc.chans, in wire order; the
// request's map is made only when asked for (scratch.injections): the
// assembly needs only the channels.
func decodeInjections(b []byte, sc *scratch) ([]byte, *Error) {
	n, b, err := readMapHeader(b)
	if err != nil {
		return b, err
	}
	sc.injSent = true
	for i := uint32(0); i < n; i++ {
		var ch string
		ch, b, err = readKey(b)
		if err != nil {
			return b, err
		}
		if sc.hasChannel(ch) {
			return b, newError(CodeDuplicateKey, channelSeg(ch), "channel "+quote(ch)+" appears twice in injections; send each channel once")
		}
		var entries []Injection
		entries, b, err = decodeEntries(b, sc)
		if err != nil {
			return b, err.within(channelSeg(ch))
		}
		sc.addChannel(ch, entries)
	}
	return b, nil
}

func decodeEntries(b []byte, sc *scratch) ([]Injection, []byte, *Error) {
	n, b, err := readArrayHeader(b)
	if err != nil {
		return nil, b, err
	}
	entries := reserve(&sc.entries, hint(n, len(b), 16))
	for i := 0; i < int(n); i++ {
		var e Injection
		e, b, err = decodeEntry(b)
		if err != nil {
			return nil, b, err.within(indexSeg(i))
		}
		entries = append(entries, e)
	}
	return entries, b, nil
}

func decodeEntry(b []byte) (Injection, []byte, *Error) {
	var e Injection
	n, b, err := readMapHeader(b)
	if err != nil {
		return e, b, err
	}
	const fID, fContent = 1, 2
	var seen uint
	for i := uint32(0); i < n; i++ {
		var key string
		key, b, err = readKey(b)
		if err != nil {
			return e, b, err
		}
		switch key {
		case "entry_id":
			if seen&fID != 0 {
				return e, b, duplicateKey(key)
			}
			seen |= fID
			e.EntryID, b, err = readStr(b)
			if err == nil && e.EntryID == "" {
				err = emptyEntryID()
			}
		case "content":
			if seen&fContent != 0 {
				return e, b, duplicateKey(key)
			}
			seen |= fContent
			e.Content, b, err = readStr(b)
		default:
			return e, b, unknownField(key, "an injection", "entry_id, content")
		}
		if err != nil {
			return e, b, err.within(fieldSeg(key))
		}
	}
	if seen&fID == 0 {
		return e, b, missingField("entry_id", "an injection")
	}
	if seen&fContent == 0 {
		return e, b, missingField("content", "an injection")
	}
	return e, b, nil
}

func emptyEntryID() *Error {
	return newError(CodeInvalidEntryID, "", "entry_id is empty; give every injection a non-empty identifier")
}

func decodeSteps(b []byte, counts *[]int, sc *scratch) ([]Step, []byte, *Error) {
	n, b, err := readArrayHeader(b)
	if err != nil {
		return nil, b, err
	}
	steps := reserve(&sc.steps, hint(n, len(b), 16))
	for i := 0; i < int(n); i++ {
		var s Step
		var rawChars, obsChars int
		if s, rawChars, obsChars, b = fastStep(b); rawChars < 0 {
			s, rawChars, obsChars, b, err = decodeStep(b)
			if err != nil {
				return nil, b, err.within(indexSeg(i))
			}
		}
		steps = append(steps, s)
		*counts = append(*counts, rawChars, obsChars)
	}
	return steps, b, nil
}

func decodeStep(b []byte) (s Step, rawChars, obsChars int, _ []byte, _ *Error) {
	n, b, err := readMapHeader(b)
	if err != nil {
		return s, rawChars, obsChars, b, err
	}
	const fRaw, fObs = 1, 2
	var seen uint
	for i := uint32(0); i < n; i++ {
		var key string
		key, b, err = readKey(b)
		if err != nil {
			return s, rawChars, obsChars, b, err
		}
		switch key {
		case "raw_output":
			if seen&fRaw != 0 {
				return s, rawChars, obsChars, b, duplicateKey(key)
			}
			seen |= fRaw
			s.RawOutput, rawChars, b, err = readStrN(b)
		case "observation":
			if seen&fObs != 0 {
				return s, rawChars, obsChars, b, duplicateKey(key)
			}
			seen |= fObs
			s.Observation, obsChars, b, err = readStrN(b)
		default:
			return s, rawChars, obsChars, b, unknownField(key, "a step", "raw_output, observation")
		}
		if err != nil {
			return s, rawChars, obsChars, b, err.within(fieldSeg(key))
		}
	}
	if seen&fRaw == 0 {
		return s, rawChars, obsChars, b, missingField("raw_output", "a step")
	}
	if seen&fObs == 0 {
		return s, rawChars, obsChars, b, missingField("observation", "a step")
	}
	return s, rawChars, obsChars, b, nil
}
