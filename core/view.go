package core

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/polyloop/assembly/core/jsonstr"
)

// The view of an ok response (docs/SPEC.md §7.8): where its segments end,
// its steps, where the budget is first exceeded, and where each text block
// lies inside the canonical response bytes, so that a host shows a prompt
// without decoding the request for its shape or the response for its texts.
// The encoder records the text ranges as it writes them (encode.go).

// View is the layout of one ok response.
type View struct {
	// RunEnd, InjectionsEnd and GoalEnd are the message indices where the
	// run, injection and goal segments end (docs/SPEC.md §3); the history
	// runs from GoalEnd to the last message.
	RunEnd, InjectionsEnd, GoalEnd int
	Steps                          int    // steps in the history: two messages each
	MaxPromptChars                 *int64 // the request's budget; nil when it has none
	// FirstOver is the first message at which the running sum of
	// message_chars exceeds MaxPromptChars (docs/SPEC.md §4), -1 when it
	// never does.
	FirstOver int
	// Roles are the distinct roles in order of first use; Role[i] indexes
	// it for message i.
	Roles []string
	Role  []int
	// BlockStart[i] is the first text block of message i (len = messages +
	// 1); block b's text is response[Texts[2b]:Texts[2b+1]].
	BlockStart []int
	Texts      []int
	// The response's own fields, for hosts that read no msgpack.
	MessageChars    []int64
	PromptChars     int64
	ContextOverflow bool
	Injected        []Injected
	PrefixDigests   PrefixDigests
	ok              bool
}

// AssembleView is AssembleBytes with the view of its response; view is nil
// for an error response.
func AssembleView(request []byte) (response []byte, view *View) {
	return assembleViewInto(nil, request)
}

// assembleViewInto is AssembleView writing the response over buf's bytes
// (buf[:0]: the caller reuses one buffer).
func assembleViewInto(buf, request []byte) (response []byte, view *View) {
	v := new(View)
	resp := appendAssembleBytes(buf[:0], request, true, v)
	if !v.ok {
		return resp, nil
	}
	// The strings may alias the request (or its scratch): copies.
	for k := range v.Roles {
		v.Roles[k] = strings.Clone(v.Roles[k])
	}
	for k := range v.Injected {
		v.Injected[k].Channel, v.Injected[k].EntryID = strings.Clone(v.Injected[k].Channel), strings.Clone(v.Injected[k].EntryID)
	}
	return resp, v
}

// AppendAssembleViewBytes is the module's assemble_view export (docs/SPEC.md
// §7.8): it appends the answer to dst: the response's length as 4 bytes
// little-endian, the response AssembleBytes gives, then the view as JSON
// text (View.AppendJSON), or null for an error response.
func AppendAssembleViewBytes(dst, request []byte) []byte {
	base := len(dst)
	var v View
	dst = appendAssembleBytes(append(dst, 0, 0, 0, 0), request, true, &v)
	binary.LittleEndian.PutUint32(dst[base:], uint32(len(dst)-base-4))
	if !v.ok {
		_, err := DecodeResponse(dst[base+4:])
		e, _ := err.(*Error)
		if e == nil {
			return append(dst, "null"...)
		}
		return appendErrorAt(dst, e.Path, -1)
	}
	return v.AppendJSON(dst)
}

// AppendErrorView appends the view answer of an error response: the answer
// AppendAssembleViewBytes gives for a request that fails with e; syntaxByte
// is the byte of a JSON syntax error in the request's text (-1 for none).
func AppendErrorView(dst []byte, e *Error, syntaxByte int) []byte {
	resp := encodeError(e)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(resp)))
	return appendErrorAt(append(dst, resp...), e.Path, syntaxByte)
}

// appendErrorAt writes where an error is, for an editor that shows the
// request (docs/SPEC.md §7.8): {"error_path": the path's keys and indexes,
// "syntax_byte": the byte of a JSON syntax error or null}.
func appendErrorAt(dst []byte, path string, syntaxByte int) []byte {
	dst = append(dst, `{"error_path":[`...)
	for k, p := range pathParts(path) {
		if s, ok := p.(string); ok {
			dst = jsonstr.Append(comma(dst, k), s)
		} else {
			dst = strconv.AppendInt(comma(dst, k), int64(p.(int)), 10)
		}
	}
	dst = append(dst, `],"syntax_byte":`...)
	if syntaxByte < 0 {
		return append(dst, "null}"...)
	}
	return append(strconv.AppendInt(dst, int64(syntaxByte), 10), '}')
}

// appendView appends the ok response of a to dst (appendTo) and fills v.
func (a *assembly) appendView(dst []byte, v *View) []byte {
	v.Texts = make([]int, 0, 2*len(a.msgs))
	a.texts, a.textBase = &v.Texts, len(dst)
	dst = a.appendTo(dst)
	a.texts = nil
	*v = View{
		RunEnd: a.runEnd, InjectionsEnd: a.injEnd, GoalEnd: a.goalEnd, Steps: (len(a.msgs) - a.goalEnd) / 2,
		FirstOver: -1, Texts: v.Texts, Roles: []string{},
		Role: make([]int, len(a.msgs)), BlockStart: make([]int, len(a.msgs)+1), MessageChars: make([]int64, len(a.msgs)),
		PromptChars: a.promptChars, ContextOverflow: a.overflow(), Injected: append([]Injected{}, a.injected...),
		PrefixDigests: PrefixDigests{Run: a.digests[0], Injections: a.digests[1], Goal: a.digests[2]}, ok: true,
	}
	if a.budget != nil {
		b := *a.budget // a copy: the budget lives in the scratch
		v.MaxPromptChars = &b
	}
	var sum int64
	blocks := 0
	for i := range a.msgs {
		m := &a.msgs[i]
		v.Role[i] = v.roleIndex(m.role)
		v.BlockStart[i] = blocks
		blocks += m.blockCount()
		v.MessageChars[i] = m.chars
		sum = addChars(sum, m.chars)
		if v.FirstOver < 0 && a.budget != nil && sum > *a.budget {
			v.FirstOver = i
		}
	}
	v.BlockStart[len(a.msgs)] = blocks
	return dst
}

func (m *outMsg) blockCount() int {
	if m.kind == kCopy {
		return len(m.blocks)
	}
	return 1
}

// roleIndex is the index of role in v.Roles, added when new (a prompt has
// a handful of roles: a linear search).
func (v *View) roleIndex(role string) int {
	for k, r := range v.Roles {
		if r == role {
			return k
		}
	}
	v.Roles = append(v.Roles, role)
	return len(v.Roles) - 1
}

// AppendJSON appends v as the JSON text of the assemble_view answer
// (docs/SPEC.md §7.8): snake_case keys in the order of the fields; the budget
// as a decimal string (exact in every host, where a JSON number may not be),
// texts as one array of start, end pairs.
func (v *View) AppendJSON(dst []byte) []byte {
	dst = appendJSONInt(append(dst, `{"run_end":`...), int64(v.RunEnd))
	dst = appendJSONInt(append(dst, `,"injections_end":`...), int64(v.InjectionsEnd))
	dst = appendJSONInt(append(dst, `,"goal_end":`...), int64(v.GoalEnd))
	dst = appendJSONInt(append(dst, `,"steps":`...), int64(v.Steps))
	dst = append(dst, `,"step_start":[`...) // step k's first message; then the count of messages
	for k := range v.Steps + 1 {
		dst = appendJSONInt(comma(dst, k), int64(v.GoalEnd+2*k))
	}
	dst = append(dst, ']')
	dst = append(dst, `,"max_prompt_chars":`...)
	if v.MaxPromptChars == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(appendJSONInt(append(dst, '"'), *v.MaxPromptChars), '"')
	}
	dst = appendJSONInt(append(dst, `,"first_over":`...), int64(v.FirstOver))
	dst = append(dst, `,"roles":[`...)
	for k, r := range v.Roles {
		dst = jsonstr.Append(comma(dst, k), r)
	}
	dst = appendJSONInts(append(dst, `],"role":`...), v.Role)
	dst = appendJSONInts(append(dst, `,"block_start":`...), v.BlockStart)
	dst = appendJSONInts(append(dst, `,"texts":`...), v.Texts)
	dst = append(dst, `,"message_chars":[`...)
	for k, c := range v.MessageChars {
		dst = appendJSONInt(comma(dst, k), c)
	}
	dst = appendJSONInt(append(dst, `],"prompt_chars":`...), v.PromptChars)
	dst = strconv.AppendBool(append(dst, `,"context_overflow":`...), v.ContextOverflow)
	dst = append(dst, `,"injected":[`...)
	for k, in := range v.Injected {
		dst = jsonstr.Append(append(comma(dst, k), `{"channel":`...), in.Channel)
		dst = jsonstr.Append(append(dst, `,"entry_id":`...), in.EntryID)
		dst = append(appendJSONInt(append(dst, `,"message_index":`...), int64(in.MessageIndex)), '}')
	}
	d := v.PrefixDigests
	dst = jsonstr.Append(append(dst, `],"prefix_digests":{"run":`...), d.Run)
	dst = jsonstr.Append(append(dst, `,"injections":`...), d.Injections)
	dst = jsonstr.Append(append(dst, `,"goal":`...), d.Goal)
	return append(dst, "}}"...)
}

func comma(dst []byte, k int) []byte {
	if k > 0 {
		return append(dst, ',')
	}
	return dst
}

func appendJSONInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

func appendJSONInts(dst []byte, ns []int) []byte {
	dst = append(dst, '[')
	for k, n := range ns {
		dst = strconv.AppendInt(comma(dst, k), int64(n), 10)
	}
	return append(dst, ']')
}
