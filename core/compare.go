package core

import (
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/polyloop/assembly/core/msgp"
)

// The comparison of two prompts (docs/SPEC.md §7.9): where two assembled
// requests, or a recorded message list and an assembled request, first
// differ, in which segment, and how much of the cacheable prefix survives.
// One function answers the module's compare export, the CLI's compare
// subcommand and every binding's compare.

// Comparison is the answer of Compare.
type Comparison struct {
	Identical bool
	A, B      CompareSide
	// First is the first difference, nil when the prompts are identical.
	First *Difference
	// Digests says, for the run, injection and goal prefix digests, whether
	// they still match; nil where it cannot be told (neither side is a
	// request).
	Digests [3]*bool
	// CacheablePrefixChars counts the code points (as prompt_chars counts
	// them) of B's prompt before the first difference: the messages before
	// it, whole, plus the common start of the differing message's text.
	CacheablePrefixChars int64
}

// CompareSide describes one side: a request or a recorded message list.
type CompareSide struct {
	Kind        string // "request" or "messages"
	Messages    int
	PromptChars int64
}

// Difference is where two prompts first differ.
type Difference struct {
	Message int    // the message index
	Char    int    // code points into the message's text (its blocks' texts joined)
	Kind    string // DiffRole, DiffText, DiffBlocks or DiffLength
	// Segment is the segment of Message in the layout of B (of A when B is
	// a recorded list; "" when neither is a request); Step is the step of a
	// history message, -1 otherwise.
	Segment string
	Step    int
	// RoleA, RoleB are the two messages' roles; HasA, HasB false for the
	// side whose prompt has no message at Message.
	RoleA, RoleB string
	HasA, HasB   bool
	// Before is the common text just before the difference, A and B each
	// side's text from it, bounded (ExcerptBefore, ExcerptAfter code points;
	// "…" marks a cut).
	Before, A, B string
}

// The kinds of a difference.
const (
	DiffRole   = "role"   // the roles differ (Char is 0)
	DiffText   = "text"   // the joined texts differ at Char
	DiffBlocks = "blocks" // the same text, split into blocks differently: the first boundary not shared is at Char
	DiffLength = "length" // one prompt has no message at Message (Char is 0)
)

// The bounds of a difference's excerpts, in code points.
const (
	ExcerptBefore = 32
	ExcerptAfter  = 64
)

// cmpSide is one side as the comparison reads it: per message, its role and
// its blocks' texts; the view when the side is a request.
type cmpSide struct {
	roles []string
	texts [][]string
	chars []int64
	view  *View
	resp  []byte   // a request side's response, which its texts alias
	all   []string // the cache report's: the texts' array, reused
}

// Compare compares two prompts, each given as a wire request (a msgpack map,
// assembled) or a recorded message list (a msgpack array of {role,
// content}, content a str or an array of text blocks). An invalid side is
// its error, its path prefixed with "a" or "b".
func Compare(a, b []byte) (*Comparison, *Error) {
	var sides [2]*cmpSide
	for k, raw := range [2][]byte{a, b} {
		s, err := readSide(raw)
		if err != nil {
			return nil, sideError(err, k)
		}
		sides[k] = s
	}
	return compareSides(sides[0], sides[1]), nil
}

func sideError(e *Error, k int) *Error {
	name := "ab"[k : k+1]
	switch {
	case e.Path == "" || e.Path[0] == '[':
		e.Path = name + e.Path
	default:
		e.Path = name + "." + e.Path
	}
	return e
}

func readSide(b []byte) (*cmpSide, *Error) {
	switch {
	case len(b) > 0 && msgp.NextType(b) == msgp.MapType && isPromptForm(b):
		s := &cmpSide{view: new(View)}
		if err := planSide(s, b); err != nil {
			return nil, err
		}
		return s, nil
	case len(b) > 0 && msgp.NextType(b) == msgp.MapType:
		return requestSide(b)
	case len(b) > 0 && msgp.NextType(b) == msgp.ArrayType:
		return recordedSide(b)
	}
	return nil, newError(CodeMalformedRequest, "", "expected a request (a map), a recorded message list (an array) or either as JSON text (a str), found "+typeName(b))
}

// requestSide assembles a request and reads its messages through its view.
func requestSide(b []byte) (*cmpSide, *Error) { return requestSideInto(nil, b) }

// requestSideInto is requestSide writing the response over buf's bytes: the
// side's texts alias them until buf is used again.
func requestSideInto(buf, b []byte) (*cmpSide, *Error) {
	resp, v := assembleViewInto(buf, b)
	if v == nil {
		_, err := DecodeResponse(resp)
		if e, ok := err.(*Error); ok {
			return nil, e
		}
		return nil, newError(CodeInternal, "", "the assembler answered bytes that are not a response")
	}
	n := len(v.Role)
	s := &cmpSide{roles: make([]string, n), texts: make([][]string, n), chars: v.MessageChars, view: v, resp: resp}
	// The texts are slices of the response, which nothing writes again
	// while the side is in use (requestSideInto).
	whole := unsafe.String(unsafe.SliceData(resp), len(resp))
	all := make([]string, v.BlockStart[n])
	for blk := range all {
		all[blk] = whole[v.Texts[2*blk]:v.Texts[2*blk+1]]
	}
	for i := range n {
		s.roles[i] = v.Roles[v.Role[i]]
		s.texts[i] = all[v.BlockStart[i]:v.BlockStart[i+1]:v.BlockStart[i+1]]
	}
	return s, nil
}

// recordedSide reads a recorded message list: an array of {role, content},
// a role any str, content a str (one text block) or an array of text
// blocks as a request's messages have them.
func recordedSide(b []byte) (*cmpSide, *Error) {
	n, b, err := readArrayHeader(b)
	if err != nil {
		return nil, err
	}
	s := &cmpSide{}
	for i := 0; i < int(n); i++ {
		var role string
		var texts []string
		if role, texts, b, err = recordedMessage(b); err != nil {
			return nil, err.within(indexSeg(i))
		}
		var chars int64
		for _, t := range texts {
			chars += int64(utf8.RuneCountInString(t))
		}
		s.roles, s.texts, s.chars = append(s.roles, role), append(s.texts, texts), append(s.chars, chars)
	}
	if len(b) != 0 {
		return nil, newError(CodeMalformedRequest, "", "bytes follow the message list; send one array")
	}
	return s, nil
}

func recordedMessage(b []byte) (role string, texts []string, _ []byte, err *Error) {
	n, b, err := readMapHeader(b)
	if err != nil {
		return "", nil, b, err
	}
	var seen [2]bool
	for i := uint32(0); i < n; i++ {
		var key string
		if key, b, err = readKey(b); err != nil {
			return "", nil, b, err
		}
		k := 0 // role
		switch key {
		case "content":
			k = 1
		case "role":
		default:
			return "", nil, b, unknownField(key, "a recorded message", "role, content")
		}
		if seen[k] {
			return "", nil, b, duplicateKey(key)
		}
		seen[k] = true
		if k == 0 {
			role, b, err = readStr(b)
		} else {
			texts, b, err = recordedContent(b)
		}
		if err != nil {
			return "", nil, b, err.within(fieldSeg(key))
		}
	}
	if !seen[0] {
		return "", nil, b, missingField("role", "a recorded message")
	}
	if !seen[1] {
		return "", nil, b, missingField("content", "a recorded message")
	}
	return strings.Clone(role), texts, b, nil
}

// recordedContent reads a content: a str is one text block.
func recordedContent(b []byte) ([]string, []byte, *Error) {
	if len(b) > 0 && msgp.NextType(b) == msgp.StrType {
		t, rest, err := readStr(b)
		return []string{strings.Clone(t)}, rest, err
	}
	var counts []int
	blocks, rest, err := decodeBlocks(b, &counts, new(scratch))
	if err != nil {
		return nil, b, err
	}
	texts := make([]string, len(blocks))
	for k, blk := range blocks {
		texts[k] = strings.Clone(blk.Text)
	}
	return texts, rest, nil
}

// compareSides finds the first difference of a and b and what survives it.
func compareSides(a, b *cmpSide) *Comparison {
	c := &Comparison{A: a.describe(), B: b.describe()}
	c.First = firstDifference(a, b)
	c.Identical = c.First == nil
	layout := b.view
	if layout == nil {
		layout = a.view
	}
	for i, ch := range b.chars {
		if c.First != nil && i >= c.First.Message {
			break
		}
		c.CacheablePrefixChars += ch
	}
	if c.First != nil {
		c.CacheablePrefixChars += int64(c.First.Char)
		c.First.Segment, c.First.Step = segmentOf(layout, c.First.Message)
	}
	c.Digests = digestsMatch(a.view, b.view, layout, c.First)
	return c
}

func (s *cmpSide) describe() CompareSide {
	d := CompareSide{Kind: "messages", Messages: len(s.roles)}
	if s.view != nil {
		d.Kind = "request"
	}
	for _, ch := range s.chars {
		d.PromptChars += ch
	}
	return d
}

// firstDifference compares message by message: roles, then the joined
// texts, then where the blocks split them; a prompt that ends first
// differs at its length. Nil when a and b are identical.
func firstDifference(a, b *cmpSide) *Difference {
	n := min(len(a.roles), len(b.roles))
	for i := range n {
		ja, jb := strings.Join(a.texts[i], ""), strings.Join(b.texts[i], "")
		if a.roles[i] == b.roles[i] && ja == jb && len(a.texts[i]) == 1 && len(b.texts[i]) == 1 {
			continue // the common case of a run: one block, the same
		}
		d := &Difference{Message: i, RoleA: a.roles[i], RoleB: b.roles[i], HasA: true, HasB: true}
		switch p := commonPrefix(ja, jb); {
		case a.roles[i] != b.roles[i]:
			d.Kind = DiffRole
			d.setExcerpt(ja, jb, 0)
		case p < len(ja) || p < len(jb):
			d.Kind, d.Char = DiffText, utf8.RuneCountInString(ja[:p])
			d.setExcerpt(ja, jb, p)
		default:
			q := firstSplit(a.texts[i], b.texts[i])
			if q < 0 {
				continue
			}
			d.Kind, d.Char = DiffBlocks, utf8.RuneCountInString(ja[:q])
			d.setExcerpt(ja, jb, q)
		}
		return d
	}
	if len(a.roles) == len(b.roles) {
		return nil
	}
	d := &Difference{Message: n, Kind: DiffLength, HasA: n < len(a.roles), HasB: n < len(b.roles)}
	var ja, jb string
	if d.HasA {
		d.RoleA, ja = a.roles[n], strings.Join(a.texts[n], "")
	}
	if d.HasB {
		d.RoleB, jb = b.roles[n], strings.Join(b.texts[n], "")
	}
	d.setExcerpt(ja, jb, 0)
	return d
}

// commonPrefix is the length in bytes of the longest common prefix of a and
// b that ends at a code point boundary.
func commonPrefix(a, b string) int {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	for p > 0 && p < len(a) && !utf8.RuneStart(a[p]) {
		p--
	}
	return p
}

// firstSplit is the byte offset (in the joined text) of the first block
// boundary that a and b, two splits of one text, do not share; -1 when they
// split it alike.
func firstSplit(a, b []string) int {
	pa, pb := 0, 0
	for k := 0; k < len(a)-1 || k < len(b)-1; k++ {
		if k >= len(a)-1 || k >= len(b)-1 {
			if k < len(a)-1 {
				return pa + len(a[k])
			}
			return pb + len(b[k])
		}
		pa, pb = pa+len(a[k]), pb+len(b[k])
		if pa != pb {
			return min(pa, pb)
		}
	}
	if len(a) != len(b) { // one empty message has a block, the other none
		return 0
	}
	return -1
}

// setExcerpt sets the bounded excerpts around byte offset p, where a and b
// share a[:p].
func (d *Difference) setExcerpt(a, b string, p int) {
	before := a[:p]
	if n := utf8.RuneCountInString(before); n > ExcerptBefore {
		for range n - ExcerptBefore {
			_, size := utf8.DecodeRuneInString(before)
			before = before[size:]
		}
		before = "…" + before
	}
	// Copies: the texts may alias a response buffer the caller reuses
	// (requestSideInto).
	d.Before, d.A, d.B = strings.Clone(before), strings.Clone(excerptFrom(a[p:])), strings.Clone(excerptFrom(b[min(p, len(b)):]))
}

func excerptFrom(s string) string {
	n := 0
	for i := range s {
		if n == ExcerptAfter {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// segmentOf names the segment of message i in a layout (docs/SPEC.md §3),
// with the step of a history message; "" and -1 without a layout.
func segmentOf(v *View, i int) (string, int) {
	switch {
	case v == nil:
		return "", -1
	case i < v.RunEnd:
		return "run", -1
	case i < v.InjectionsEnd:
		return "injections", -1
	case i < v.GoalEnd:
		return "goal", -1
	}
	return "history", (i - v.GoalEnd) / 2
}

// digestsMatch says whether each prefix digest still matches. Two requests
// compare their digests; a recorded list has the digest its messages would
// have over the request's segment ends, so it matches while the first
// difference lies at or after the segment's end.
func digestsMatch(a, b, layout *View, first *Difference) (m [3]*bool) {
	if layout == nil {
		return m
	}
	for k := range 3 {
		var ok bool
		if a != nil && b != nil {
			da, db := a.PrefixDigests, b.PrefixDigests
			ok = [3]string{da.Run, da.Injections, da.Goal}[k] == [3]string{db.Run, db.Injections, db.Goal}[k]
		} else {
			ok = first == nil || first.Message >= [3]int{layout.RunEnd, layout.InjectionsEnd, layout.GoalEnd}[k]
		}
		m[k] = &ok
	}
	return m
}
