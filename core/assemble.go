package core

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"maps"
	"slices"
	"strconv"

	"github.com/tinylib/msgp/msgp"
)

// MaxResponseBytes bounds the size of a response. A request whose response
// would be larger (a wide template field repeated over many steps, say) is
// answered with CodeTooLarge instead of exhausting memory.
const MaxResponseBytes = 3 << 29 // 1.5 GiB

// AssembleBytes is the wire function of SPEC §2-6: it decodes a msgpack
// request, assembles it and returns the canonical msgpack response, ok or
// error. It never panics (a panic is recovered into an internal error
// response) and never writes to stdout.
func AssembleBytes(request []byte) (response []byte) {
	defer func() {
		if r := recover(); r != nil {
			response = InternalErrorResponse("the assembler panicked; please report this request: " + panicText(r))
		}
	}()
	if len(request) > MaxRequestBytes {
		return encodeError(newError(CodeTooLarge, "", "the request is "+strconv.Itoa(len(request))+" bytes, over the 1 GiB limit; split it into smaller requests"))
	}
	req, tmpl, err := decodeRequest(request)
	if err != nil {
		return encodeError(err)
	}
	a := build(req, tmpl)
	out, err := a.encode()
	if err != nil {
		return encodeError(err)
	}
	return out
}

func panicText(r any) string {
	switch v := r.(type) {
	case error:
		return v.Error()
	case string:
		return v
	}
	return "unknown panic value"
}

// InternalErrorResponse returns the canonical error response with code
// internal and the given message. Hosts use it for failures outside the core.
func InternalErrorResponse(msg string) []byte {
	return encodeError(newError(CodeInternal, "", msg))
}

// Assemble assembles a typed request. It checks the request as the wire
// decoder would (UTF-8, roles, block types, entry ids, budget, template) and
// returns an *Error with the path of the first problem, in SPEC table order.
func Assemble(req *Request) (*Response, error) {
	tmpl, err := checkRequest(req)
	if err != nil {
		return nil, err
	}
	a := build(req, tmpl)
	return a.response()
}

// ---- the assembly plan ----

type outKind uint8

const (
	kCopy outKind = iota // a run or goal message, copied block by block
	kText                // one text block: an injection or a raw_output
	kObs                 // one text block: the rendered observation
)

type outMsg struct {
	kind   outKind
	role   string
	blocks []Block // kCopy
	text   string  // kText: the text; kObs: the observation
	chars  int64
	nbytes int // kObs: bytes of the rendering
}

type assembly struct {
	msgs                    []outMsg
	runEnd, injEnd, goalEnd int // message index where each segment ends
	injected                []Injected
	tmpl                    *Template
	promptChars             int64
	budget                  *int64
}

// build lays out the messages of SPEC §3 and measures them (§4).
func build(req *Request, tmpl *Template) *assembly {
	nInj := 0
	for _, e := range req.Injections {
		nInj += len(e)
	}
	a := &assembly{tmpl: tmpl, budget: req.MaxPromptChars}
	a.msgs = make([]outMsg, 0, len(req.RunMessages)+nInj+len(req.GoalMessages)+2*len(req.Steps))
	for _, m := range req.RunMessages {
		a.addCopy(m)
	}
	a.runEnd = len(a.msgs)
	if nInj > 0 {
		a.injected = make([]Injected, 0, nInj)
		for _, ch := range slices.Sorted(maps.Keys(req.Injections)) { // byte order = code-point order
			for _, e := range req.Injections[ch] {
				a.injected = append(a.injected, Injected{Channel: ch, EntryID: e.EntryID, MessageIndex: len(a.msgs)})
				a.addText(RoleUser, e.Content)
			}
		}
	}
	a.injEnd = len(a.msgs)
	for _, m := range req.GoalMessages {
		a.addCopy(m)
	}
	a.goalEnd = len(a.msgs)
	for _, s := range req.Steps {
		a.addStep(s)
	}
	return a
}

func (a *assembly) addCopy(m Message) {
	var chars int64
	for _, b := range m.Content {
		chars += int64(codePoints(b.Text))
	}
	a.msgs = append(a.msgs, outMsg{kind: kCopy, role: m.Role, blocks: m.Content, chars: chars})
	a.promptChars += chars
}

func (a *assembly) addText(role, text string) {
	chars := int64(codePoints(text))
	a.msgs = append(a.msgs, outMsg{kind: kText, role: role, text: text, chars: chars})
	a.promptChars += chars
}

func (a *assembly) addStep(s Step) {
	a.addText(RoleAssistant, s.RawOutput)
	nb, chars := a.tmpl.RenderSize(s.Observation)
	a.msgs = append(a.msgs, outMsg{kind: kObs, role: RoleUser, text: s.Observation, chars: chars, nbytes: nb})
	a.promptChars += chars
}

func (a *assembly) overflow() bool {
	return a.budget != nil && a.promptChars > *a.budget
}

// ---- canonical encoding ----

func strSize(n int) int {
	switch {
	case n <= 31:
		return 1 + n
	case n <= 0xff:
		return 2 + n
	case n <= 0xffff:
		return 3 + n
	}
	return 5 + n
}

func hdrSize(n int) int {
	switch {
	case n <= 15:
		return 1
	case n <= 0xffff:
		return 3
	}
	return 5
}

func uintSize(u uint64) int {
	switch {
	case u <= 0x7f:
		return 1
	case u <= 0xff:
		return 2
	case u <= 0xffff:
		return 3
	case u <= 0xffffffff:
		return 5
	}
	return 9
}

// Encoded sizes of the fixed parts of a message: {role: ..., content: [...]}
// and of a text block {type: "text", text: ...}.
const (
	msgFixed   = 1 + 5 + 8 // map header, "role", "content"
	blockFixed = 1 + 5 + 5 + 5
)

func (m *outMsg) encodedSize() int {
	n := msgFixed + strSize(len(m.role))
	switch m.kind {
	case kCopy:
		n += hdrSize(len(m.blocks))
		for _, b := range m.blocks {
			n += 1 + 5 + strSize(len(b.Type)) + 5 + strSize(len(b.Text))
		}
	case kText:
		n += 1 + blockFixed + strSize(len(m.text))
	case kObs:
		n += 1 + blockFixed + strSize(m.nbytes)
	}
	return n
}

func appendBlockHead(dst []byte) []byte {
	dst = append(dst, 0x91, 0x82, 0xa4, 't', 'y', 'p', 'e', 0xa4, 't', 'e', 'x', 't', 0xa4, 't', 'e', 'x', 't')
	return dst
}

func (a *assembly) appendMessage(dst []byte, m *outMsg) []byte {
	dst = append(dst, 0x82, 0xa4, 'r', 'o', 'l', 'e')
	dst = msgp.AppendString(dst, m.role)
	dst = append(dst, 0xa7, 'c', 'o', 'n', 't', 'e', 'n', 't')
	switch m.kind {
	case kCopy:
		dst = msgp.AppendArrayHeader(dst, uint32(len(m.blocks)))
		for _, b := range m.blocks {
			dst = append(dst, 0x82, 0xa4, 't', 'y', 'p', 'e')
			dst = msgp.AppendString(dst, b.Type)
			dst = append(dst, 0xa4, 't', 'e', 'x', 't')
			dst = msgp.AppendString(dst, b.Text)
		}
	case kText:
		dst = appendBlockHead(dst)
		dst = msgp.AppendString(dst, m.text)
	case kObs:
		dst = appendBlockHead(dst)
		dst = appendStrHeader(dst, m.nbytes)
		dst = a.tmpl.AppendRender(dst, m.text)
	}
	return dst
}

func appendStrHeader(dst []byte, n int) []byte {
	switch {
	case n <= 31:
		return append(dst, 0xa0|byte(n))
	case n <= 0xff:
		return append(dst, 0xd9, byte(n))
	case n <= 0xffff:
		return append(dst, 0xda, byte(n>>8), byte(n))
	}
	return append(dst, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

var (
	keyV               = []byte{0xa1, 'v'}
	keyOK              = []byte{0xa2, 'o', 'k'}
	keyMessages        = []byte("\xa8messages")
	keyMessageChars    = []byte("\xadmessage_chars")
	keyPromptChars     = []byte("\xacprompt_chars")
	keyContextOverflow = []byte("\xb0context_overflow")
	keyInjected        = []byte("\xa8injected")
	keyPrefixDigests   = []byte("\xaeprefix_digests")
)

// encode writes the canonical ok response.
func (a *assembly) encode() ([]byte, *Error) {
	size := 1 + 2 + 1 + 3 + 1 + len(keyMessages) + hdrSize(len(a.msgs))
	for i := range a.msgs {
		size += a.msgs[i].encodedSize()
	}
	size += len(keyMessageChars) + hdrSize(len(a.msgs))
	for i := range a.msgs {
		size += uintSize(uint64(a.msgs[i].chars))
	}
	size += len(keyPromptChars) + 9 + len(keyContextOverflow) + 1 + len(keyInjected) + hdrSize(len(a.injected))
	for _, in := range a.injected {
		size += 1 + 8 + strSize(len(in.Channel)) + 9 + strSize(len(in.EntryID)) + 14 + 9
	}
	size += len(keyPrefixDigests) + 1 + 3*(6+66)
	if size > MaxResponseBytes {
		return nil, newError(CodeTooLarge, "", "the response would be "+strconv.Itoa(size)+" bytes, over the 1.5 GiB limit; split the request (fewer steps, or a narrower template width)")
	}

	out := make([]byte, 0, size)
	out = append(out, 0x88)
	out = append(out, keyV...)
	out = append(out, WireVersion)
	out = append(out, keyOK...)
	out = append(out, 0xc3)
	out = append(out, keyMessages...)
	out = msgp.AppendArrayHeader(out, uint32(len(a.msgs)))
	msgStart := len(out)
	out, ends := a.appendMessages(out, a.msgs)
	out = a.appendTail(out)
	digests := prefixDigests(out[msgStart:], [3]int{ends[0] - msgStart, ends[1] - msgStart, ends[2] - msgStart}, a.segments())
	out = appendDigests(out, digests)
	return out, nil
}

func (a *assembly) segments() [3]int { return [3]int{a.runEnd, a.injEnd, a.goalEnd} }

// appendMessages encodes msgs (a prefix of a.msgs) and returns, for each
// segment end, the length of dst where that segment's messages end.
func (a *assembly) appendMessages(dst []byte, msgs []outMsg) ([]byte, [3]int) {
	segs := a.segments()
	var ends [3]int
	k := 0
	for i := range msgs {
		for k < 3 && segs[k] == i {
			ends[k] = len(dst)
			k++
		}
		dst = a.appendMessage(dst, &msgs[i])
	}
	for ; k < 3; k++ {
		ends[k] = len(dst)
	}
	return dst, ends
}

// appendTail writes message_chars through injected.
func (a *assembly) appendTail(out []byte) []byte {
	out = append(out, keyMessageChars...)
	out = msgp.AppendArrayHeader(out, uint32(len(a.msgs)))
	for i := range a.msgs {
		out = msgp.AppendUint64(out, uint64(a.msgs[i].chars))
	}
	out = append(out, keyPromptChars...)
	out = msgp.AppendUint64(out, uint64(a.promptChars))
	out = append(out, keyContextOverflow...)
	out = msgp.AppendBool(out, a.overflow())
	out = append(out, keyInjected...)
	out = msgp.AppendArrayHeader(out, uint32(len(a.injected)))
	for _, in := range a.injected {
		out = append(out, 0x83, 0xa7, 'c', 'h', 'a', 'n', 'n', 'e', 'l')
		out = msgp.AppendString(out, in.Channel)
		out = append(out, 0xa8, 'e', 'n', 't', 'r', 'y', '_', 'i', 'd')
		out = msgp.AppendString(out, in.EntryID)
		out = append(out, 0xad, 'm', 'e', 's', 's', 'a', 'g', 'e', '_', 'i', 'n', 'd', 'e', 'x')
		out = msgp.AppendUint64(out, uint64(in.MessageIndex))
	}
	return out
}

// prefixDigests hashes the canonical encoding of messages[0:count[k]], given
// the encoded messages and the byte offset where each prefix ends.
func prefixDigests(encoded []byte, byteEnd, count [3]int) [3]string {
	var d [3]string
	var h hash.Hash = sha256.New()
	var hdr [5]byte
	var sum [sha256.Size]byte
	for k := range 3 {
		h.Reset()
		h.Write(msgp.AppendArrayHeader(hdr[:0], uint32(count[k])))
		h.Write(encoded[:byteEnd[k]])
		d[k] = hex.EncodeToString(h.Sum(sum[:0]))
	}
	return d
}

func appendDigests(out []byte, d [3]string) []byte {
	out = append(out, keyPrefixDigests...)
	out = append(out, 0x83, 0xa3, 'r', 'u', 'n')
	out = msgp.AppendString(out, d[0])
	out = append(out, 0xaa, 'i', 'n', 'j', 'e', 'c', 't', 'i', 'o', 'n', 's')
	out = msgp.AppendString(out, d[1])
	out = append(out, 0xa4, 'g', 'o', 'a', 'l')
	out = msgp.AppendString(out, d[2])
	return out
}

// response builds the typed Response (Assemble's result).
func (a *assembly) response() (*Response, error) {
	resp := &Response{
		Messages:        make([]Message, len(a.msgs)),
		MessageChars:    make([]int64, len(a.msgs)),
		PromptChars:     a.promptChars,
		ContextOverflow: a.overflow(),
		Injected:        a.injected,
	}
	for i := range a.msgs {
		m := &a.msgs[i]
		resp.Messages[i] = a.message(m)
		resp.MessageChars[i] = m.chars
	}
	// The digests cover only run, injection and goal messages: encode those.
	enc, ends := a.appendMessages(nil, a.msgs[:a.goalEnd])
	d := prefixDigests(enc, ends, a.segments())
	resp.PrefixDigests = PrefixDigests{Run: d[0], Injections: d[1], Goal: d[2]}
	return resp, nil
}

func (a *assembly) message(m *outMsg) Message {
	switch m.kind {
	case kCopy:
		return Message{Role: m.role, Content: slices.Clone(m.blocks)}
	case kText:
		return Message{Role: m.role, Content: []Block{{Type: BlockTypeText, Text: m.text}}}
	default:
		return Message{Role: m.role, Content: []Block{{Type: BlockTypeText, Text: a.tmpl.Render(m.text)}}}
	}
}

// ---- errors ----

func encodeError(e *Error) []byte {
	out := make([]byte, 0, 64+len(e.Message)+len(e.Path))
	out = append(out, 0x83)
	out = append(out, keyV...)
	out = append(out, WireVersion)
	out = append(out, keyOK...)
	out = append(out, 0xc2)
	out = append(out, 0xa5, 'e', 'r', 'r', 'o', 'r', 0x83, 0xa4, 'c', 'o', 'd', 'e')
	out = msgp.AppendString(out, string(e.Code))
	out = append(out, 0xa7, 'm', 'e', 's', 's', 'a', 'g', 'e')
	out = msgp.AppendString(out, e.Message)
	out = append(out, 0xa4, 'p', 'a', 't', 'h')
	out = msgp.AppendString(out, e.Path)
	return out
}
