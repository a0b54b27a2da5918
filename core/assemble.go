package core

import (
	"encoding/hex"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/tinylib/msgp/msgp"
)

// MaxResponseBytes bounds the size of a response. A request whose response
// would be larger (a wide template field repeated over many steps, say) is
// answered with CodeTooLarge instead of exhausting memory.
const MaxResponseBytes = 3 << 29 // 1.5 GiB

// maxResponse is MaxResponseBytes; tests lower it to check the limit at
// the boundary without building 1.5 GiB.
var maxResponse = MaxResponseBytes

// AssembleBytes is the wire function of docs/SPEC.md §2-6: it decodes a msgpack
// request, assembles it and returns the canonical msgpack response, ok or
// error. It never panics (a panic is recovered into an internal error
// response) and never writes to stdout.
func AssembleBytes(request []byte) (response []byte) {
	return appendAssembleBytes(nil, request, false)
}

// AppendAssembleBytes is AssembleBytes that appends the response to dst and
// returns the extended slice, for callers that reuse one buffer across calls
// (the WebAssembly module does). When dst has room for the response, it does
// not allocate for it. request must not overlap dst's spare capacity.
func AppendAssembleBytes(dst, request []byte) []byte {
	return appendAssembleBytes(dst, request, true)
}

func appendAssembleBytes(dst, request []byte, reuse bool) (response []byte) {
	defer func() {
		if r := recover(); r != nil {
			response = append(dst, InternalErrorResponse("the assembler panicked; please report this request: "+panicText(r))...)
		}
	}()
	if err := checkRequestSize(len(request)); err != nil {
		return append(dst, encodeError(err)...)
	}
	sc := getScratch()
	defer sc.release()
	req, tmpl, tc, err := decodeRequestCounted(request, sc)
	if err != nil {
		return append(dst, encodeError(err)...)
	}
	a := buildCounted(req, tmpl, tc, sc)
	size, err := a.encodedSize()
	if err != nil {
		return append(dst, encodeError(err)...)
	}
	if !reuse {
		dst = makeNoZero(size)
	} else if cap(dst)-len(dst) < size {
		dst = slices.Grow(dst, size)
	}
	return a.appendTo(dst)
}

// makeNoZero returns an empty slice with room for n bytes, without zeroing
// them as make does (writing a large response once is cheaper than clearing
// it first). strings.Builder.Grow allocates without zeroing; the builder is
// dropped and its buffer reused from its first byte.
func makeNoZero(n int) []byte {
	if n < 1024 {
		return make([]byte, 0, n)
	}
	var sb strings.Builder
	sb.Grow(n)
	sb.WriteByte(0)
	s := sb.String()
	return unsafe.Slice(unsafe.StringData(s), n)[:0]
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

// Assemble assembles a typed request. It checks the request with the wire
// decoder (on its canonical encoding, EncodeRequest: channels in code-point
// order), so an invalid request gets the *Error AssembleBytes would answer
// for that encoding: the same code, path, message and offset, the first
// problem in the table order of docs/SPEC.md. The check holds a copy of the request's text
// while it runs.
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
	// emptyObs is where the rendering of an empty observation was written
	// by appendTo, once it was.
	emptyObs span
	// emptyText is the rendering of an empty observation for message,
	// once made.
	emptyText *string
}

// build lays out the messages of docs/SPEC.md §3 and measures them (§4).
func build(req *Request, tmpl *Template) *assembly {
	return buildCounted(req, tmpl, nil, nil)
}

// buildCounted is build given, when tc is not nil, the code points the
// decoder counted. With a scratch, the plan lives in it.
func buildCounted(req *Request, tmpl *Template, tc *textCounts, sc *scratch) *assembly {
	nInj := 0
	for _, e := range req.Injections {
		nInj += len(e)
	}
	nMsgs := len(req.RunMessages) + nInj + len(req.GoalMessages) + 2*len(req.Steps)
	var a *assembly
	if sc != nil {
		a = &sc.a
		a.msgs = slices.Grow(sc.out[:0], nMsgs)
	} else {
		a = &assembly{msgs: make([]outMsg, 0, nMsgs)}
	}
	a.tmpl, a.budget = tmpl, req.MaxPromptChars
	var run, goal, steps []int
	if tc != nil {
		run, goal, steps = tc.run, tc.goal, tc.steps
	}
	for _, m := range req.RunMessages {
		run = a.addCopy(m, run)
	}
	a.runEnd = len(a.msgs)
	if nInj > 0 {
		var keys []string
		if sc != nil {
			a.injected = slices.Grow(sc.injected[:0], nInj)
			keys = sortedKeys(sc.keys[:0], req.Injections)
			sc.keys = keys
		} else {
			a.injected = make([]Injected, 0, nInj)
			keys = sortedKeys(make([]string, 0, len(req.Injections)), req.Injections)
		}
		for _, ch := range keys { // byte order = code-point order
			for _, e := range req.Injections[ch] {
				a.injected = append(a.injected, Injected{Channel: ch, EntryID: e.EntryID, MessageIndex: len(a.msgs)})
				a.addText(RoleUser, e.Content)
			}
		}
	}
	a.injEnd = len(a.msgs)
	for _, m := range req.GoalMessages {
		goal = a.addCopy(m, goal)
	}
	a.goalEnd = len(a.msgs)
	if len(steps) == 2*len(req.Steps) {
		for i, s := range req.Steps {
			a.addStepCounted(s, steps[2*i], steps[2*i+1])
		}
	} else {
		for _, s := range req.Steps {
			a.addStep(s)
		}
	}
	if sc != nil { // so that release clears what was used
		sc.out, sc.injected = a.msgs, a.injected
	}
	return a
}

// sortedKeys appends the channel names to keys in byte order (= code-point
// order).
func sortedKeys(keys []string, m map[string][]Injection) []string {
	for k := range m {
		keys = append(keys, k)
	}
	if len(keys) > 1 {
		slices.Sort(keys)
	}
	return keys
}

// addCopy adds a run or goal message. counts, when it holds an entry per
// block, gives the blocks' code points; it returns counts past those blocks.
func (a *assembly) addCopy(m Message, counts []int) []int {
	var chars int64
	if len(counts) >= len(m.Content) {
		for _, c := range counts[:len(m.Content)] {
			chars += int64(c)
		}
		counts = counts[len(m.Content):]
	} else {
		for _, b := range m.Content {
			chars += int64(codePoints(b.Text))
		}
	}
	a.msgs = append(a.msgs, outMsg{kind: kCopy, role: m.Role, blocks: m.Content, chars: chars})
	a.promptChars = addChars(a.promptChars, chars)
	return counts
}

func (a *assembly) addText(role, text string) {
	a.addTextCounted(role, text, codePoints(text))
}

func (a *assembly) addTextCounted(role, text string, chars int) {
	a.msgs = append(a.msgs, outMsg{kind: kText, role: role, text: text, chars: int64(chars)})
	a.promptChars = addChars(a.promptChars, int64(chars))
}

func (a *assembly) addStep(s Step) {
	a.addStepCounted(s, codePoints(s.RawOutput), codePoints(s.Observation))
}

// addStepCounted adds a step whose texts have rawChars and obsChars code
// points.
func (a *assembly) addStepCounted(s Step, rawChars, obsChars int) {
	a.addTextCounted(RoleAssistant, s.RawOutput, rawChars)
	nb, chars := a.tmpl.renderSizeCounted(s.Observation, int64(obsChars))
	a.msgs = append(a.msgs, outMsg{kind: kObs, role: RoleUser, text: s.Observation, chars: chars, nbytes: nb})
	a.promptChars = addChars(a.promptChars, chars)
}

// addChars adds code-point counts, saturating at the largest int64: the sum
// over many steps of a wide template can pass it, and such a response is
// too_large anyway (a code point takes at least one byte).
func addChars(sum, n int64) int64 {
	if sum > math.MaxInt64-n {
		return math.MaxInt64
	}
	return sum + n
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
	dst = appendStr(dst, m.role)
	dst = append(dst, 0xa7, 'c', 'o', 'n', 't', 'e', 'n', 't')
	switch m.kind {
	case kCopy:
		dst = appendArrayHeader(dst, len(m.blocks))
		for _, b := range m.blocks {
			dst = append(dst, 0x82, 0xa4, 't', 'y', 'p', 'e')
			dst = appendStr(dst, b.Type)
			dst = append(dst, 0xa4, 't', 'e', 'x', 't')
			dst = appendStr(dst, b.Text)
		}
	case kText:
		dst = appendBlockHead(dst)
		dst = appendStr(dst, m.text)
	case kObs:
		dst = appendBlockHead(dst)
		dst = appendStrHeader(dst, m.nbytes)
		if m.text == "" && a.emptyObs.set {
			// The same rendering again: copy it (a template of many
			// fields costs its length once, not once per step).
			return append(dst, dst[a.emptyObs.start:a.emptyObs.end]...)
		}
		start := len(dst)
		dst = a.tmpl.AppendRender(dst, m.text)
		if m.text == "" {
			a.emptyObs = span{start, len(dst), true}
		}
	}
	return dst
}

// span is a range of bytes already written to the response.
type span struct {
	start, end int
	set        bool
}

// appendStr, appendArrayHeader and appendUint write what msgp's
// AppendString, AppendArrayHeader and AppendUint64 write (the shortest form),
// without their capacity checks: encode allocates the exact size first.
func appendStr(dst []byte, s string) []byte {
	if len(s) <= 31 {
		dst = append(dst, 0xa0|byte(len(s)))
	} else {
		dst = appendStrHeader(dst, len(s))
	}
	return append(dst, s...)
}

func appendArrayHeader(dst []byte, n int) []byte {
	if n <= 15 {
		return append(dst, 0x90|byte(n))
	}
	if n <= 0xffff {
		return append(dst, 0xdc, byte(n>>8), byte(n))
	}
	return append(dst, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func appendUint(dst []byte, u uint64) []byte {
	switch {
	case u <= 0x7f:
		return append(dst, byte(u))
	case u <= 0xff:
		return append(dst, 0xcc, byte(u))
	case u <= 0xffff:
		return append(dst, 0xcd, byte(u>>8), byte(u))
	case u <= 0xffffffff:
		return append(dst, 0xce, byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
	}
	return append(dst, 0xcf, byte(u>>56), byte(u>>48), byte(u>>40), byte(u>>32), byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
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

// encodedSize returns the exact size of the ok response, or too_large: the
// response is too_large exactly when its canonical encoding would be longer
// than MaxResponseBytes. The sum saturates: it stops past MaxResponseBytes,
// so no request can make it overflow.
func (a *assembly) encodedSize() (int, *Error) {
	size := a.fixedSize() + 2*hdrSize(len(a.msgs)) + uintSize(uint64(a.promptChars))
	for i := range a.msgs {
		if size += a.msgs[i].size(); size > maxResponse {
			break
		}
	}
	return size, checkResponseSize(size)
}

// fixedSize is the size of the ok response but its messages, the headers
// of the messages and message_chars arrays and the prompt_chars value.
func (a *assembly) fixedSize() int { return fixedSize(a.injected) }

func fixedSize(injected []Injected) int {
	size := 1 + len(keyV) + 1 + len(keyOK) + 1 + len(keyMessages) + len(keyMessageChars)
	size += len(keyPromptChars) + len(keyContextOverflow) + 1 + len(keyInjected) + hdrSize(len(injected))
	for _, in := range injected {
		size += 1 + 8 + strSize(len(in.Channel)) + 9 + strSize(len(in.EntryID)) + 14 + uintSize(uint64(in.MessageIndex))
	}
	// prefix_digests: a map of three keys, each a 64-digit hex str.
	return size + len(keyPrefixDigests) + 1 + 4 + 11 + 5 + 3*strSize(64)
}

// ResponseSizer keeps the wire size of a Response that grows by whole
// messages, so that a prompt assembled step by step applies
// MaxResponseBytes exactly as AssembleBytes of the same steps does
// (Prompt.AddStep and the hosts' prompts use it). The zero value is not
// ready: use NewResponseSizer.
type ResponseSizer struct {
	size  int   // all but the headers of the two arrays of one entry per message and prompt_chars
	n     int   // messages
	chars int64 // prompt_chars
}

// NewResponseSizer returns the sizer of resp, which must be the Response of
// an Assemble (or a prompt) and so within the limit.
func NewResponseSizer(resp *Response) ResponseSizer {
	s := ResponseSizer{size: fixedSize(resp.Injected), n: len(resp.Messages), chars: resp.PromptChars}
	for i := range resp.Messages {
		s.size += messageSize(&resp.Messages[i], resp.MessageChars[i])
	}
	return s
}

// Add accounts for msgs (with their code points chars) appended to the
// response, or returns too_large (and accounts for nothing) when the
// response would then pass MaxResponseBytes.
func (s *ResponseSizer) Add(msgs []Message, chars []int64) error {
	size, pc := s.size, s.chars
	for i := range msgs {
		size += messageSize(&msgs[i], chars[i])
		pc = addChars(pc, chars[i])
	}
	return s.add(size, len(msgs), pc)
}

func (s *ResponseSizer) add(size, n int, chars int64) error {
	if err := checkResponseSize(size + 2*hdrSize(s.n+n) + uintSize(uint64(chars))); err != nil {
		return err
	}
	s.size, s.n, s.chars = size, s.n+n, chars
	return nil
}

// messageSize is what m, of chars code points, adds to a response (the
// message and its message_chars entry), as outMsg.size counts it.
func messageSize(m *Message, chars int64) int {
	n := msgFixed + strSize(len(m.Role)) + hdrSize(len(m.Content)) + uintSize(uint64(chars))
	for _, b := range m.Content {
		n += 1 + 5 + strSize(len(b.Type)) + 5 + strSize(len(b.Text))
	}
	return n
}

// size is what m adds to the response: the message and its message_chars
// entry. A message's parts are each below 2^62 bytes (a rendering is at
// most 4 bytes per code point of the observation times 2^30 fields), so the
// sum does not overflow.
func (m *outMsg) size() int {
	return m.encodedSize() + uintSize(uint64(m.chars))
}

// checkResponseSize is too_large when size is over MaxResponseBytes.
func checkResponseSize(size int) *Error {
	if size <= maxResponse {
		return nil
	}
	return newError(CodeTooLarge, "", "the response would be over the 1.5 GiB limit; split the request (fewer steps, or a narrower template width)")
}

// appendTo appends the canonical ok response to out.
func (a *assembly) appendTo(out []byte) []byte {
	a.emptyObs = span{}
	out = append(out, 0x88)
	out = append(out, keyV...)
	out = append(out, WireVersion)
	out = append(out, keyOK...)
	out = append(out, 0xc3)
	out = append(out, keyMessages...)
	out = appendArrayHeader(out, len(a.msgs))
	msgStart := len(out)
	out, ends := a.appendMessages(out, a.msgs)
	out = a.appendTail(out)
	digests := prefixDigests(out[msgStart:], [3]int{ends[0] - msgStart, ends[1] - msgStart, ends[2] - msgStart}, a.segments())
	out = appendDigests(out, digests)
	return out
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
	out = appendArrayHeader(out, len(a.msgs))
	for i := range a.msgs {
		out = appendUint(out, uint64(a.msgs[i].chars))
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
	prefix := encoded[:byteEnd[2]]
	if c := lastDigests.Load(); c != nil && c.byteEnd == byteEnd && c.count == count && string(c.prefix) == string(prefix) {
		return c.digests
	}
	var d [3]string
	var hdr [5]byte
	for k := range 3 {
		if k > 0 && count[k] == count[k-1] {
			d[k] = d[k-1] // an empty segment: the same prefix
			continue
		}
		sum := sha256Sum(appendArrayHeader(hdr[:0], count[k]), encoded[:byteEnd[k]])
		d[k] = hex.EncodeToString(sum[:])
	}
	if len(prefix) <= maxCachedPrefix {
		lastDigests.Store(&digestCache{prefix: string(prefix), byteEnd: byteEnd, count: count, digests: d})
	}
	return d
}

// lastDigests remembers the digests of the last prefix hashed: an agent loop
// sends the same run, injection and goal messages with every step, and
// comparing the prefix costs far less than hashing it three times (in the
// WebAssembly module SHA-256 runs at about 40 MB/s).
var lastDigests atomic.Pointer[digestCache]

const maxCachedPrefix = 1 << 16

type digestCache struct {
	prefix         string
	byteEnd, count [3]int
	digests        [3]string
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

// response builds the typed Response (Assemble's result), or too_large when
// the wire response would be over MaxResponseBytes, as AssembleBytes does.
func (a *assembly) response() (*Response, error) {
	if _, err := a.encodedSize(); err != nil {
		return nil, err
	}
	resp := &Response{
		Messages:        make([]Message, len(a.msgs)),
		MessageChars:    make([]int64, len(a.msgs)),
		PromptChars:     a.promptChars,
		ContextOverflow: a.overflow(),
		Injected:        a.injected,
	}
	if resp.Injected == nil { // empty, never nil: as DecodeResponse gives it
		resp.Injected = []Injected{}
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
		return Message{Role: m.role, Content: append([]Block{}, m.blocks...)} // empty, never nil
	case kText:
		return Message{Role: m.role, Content: []Block{{Type: BlockTypeText, Text: m.text}}}
	default:
		return Message{Role: m.role, Content: []Block{{Type: BlockTypeText, Text: a.render(m.text)}}}
	}
}

// render renders obs, rendering an empty observation only once.
func (a *assembly) render(obs string) string {
	if obs != "" {
		return a.tmpl.Render(obs)
	}
	if a.emptyText == nil {
		r := a.tmpl.Render("")
		a.emptyText = &r
	}
	return *a.emptyText
}

// ---- errors ----

// encodeError writes {v: 1, ok: false, error: {code, message, path}}; an
// invalid_template error carries a fourth key, offset (docs/SPEC.md §6).
func encodeError(e *Error) []byte {
	out := make([]byte, 0, 80+len(e.Message)+len(e.Path))
	out = append(out, 0x83)
	out = append(out, keyV...)
	out = append(out, WireVersion)
	out = append(out, keyOK...)
	out = append(out, 0xc2)
	withOffset := e.Code == CodeInvalidTemplate && e.Offset >= 0
	out = append(out, 0xa5, 'e', 'r', 'r', 'o', 'r')
	if withOffset {
		out = append(out, 0x84)
	} else {
		out = append(out, 0x83)
	}
	out = append(out, 0xa4, 'c', 'o', 'd', 'e')
	out = msgp.AppendString(out, string(e.Code))
	out = append(out, 0xa7, 'm', 'e', 's', 's', 'a', 'g', 'e')
	out = msgp.AppendString(out, e.Message)
	out = append(out, 0xa4, 'p', 'a', 't', 'h')
	out = msgp.AppendString(out, e.Path)
	if withOffset {
		out = append(out, 0xa6, 'o', 'f', 'f', 's', 'e', 't')
		out = msgp.AppendUint64(out, uint64(e.Offset))
	}
	return out
}
