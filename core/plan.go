package core

import (
	"math"
	"slices"
	"strings"
)

// The assembly plan of docs/SPEC.md §3 and §4: which message goes where, and its
// code points. Messages are not copied: the plan points at the request's
// texts, and encode.go writes them out.

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
	// k is the number of its (first) text among the request's texts, in
	// the order of shared texts (shared.go): kCopy its first block's, kText
	// and kObs the text's or the observation's.
	k int
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
	// texts, when set, receives where appendTo writes each text block: two
	// offsets (start, end) from textBase, the view's byte ranges (view.go).
	texts    *[]int
	textBase int
	// digests are the prefix digests appendTo wrote.
	digests [3]string
	// enc is appendShared's buffer for the canonical encoding it digests.
	enc []byte
	// lay is layout's view, and its slices' arrays, kept with enc.
	lay *layoutBuf
	// body is what the messages add to the response (outMsg.size), summed
	// as build adds them and saturated past maxResponse (encodedSize).
	body int
}

// build lays out the messages of docs/SPEC.md §3 and measures them (§4), in sc,
// with the code points in sc.tc: the decoder counted them on req or on its
// encoding (the same texts in the same order). The injection channels are
// sc.chans (the decoder's, or checkAndBuild's of a typed request), laid out
// in channel order, not in wire order; their code points are counted here.
func build(req *Request, tmpl *Template, sc *scratch) *assembly {
	nInj := 0
	for _, c := range sc.chans {
		nInj += len(c.entries)
	}
	nMsgs := len(req.RunMessages) + nInj + len(req.GoalMessages) + 2*len(req.Steps)
	a := &sc.a
	a.msgs, a.body = slices.Grow(sc.out[:0], nMsgs), 0
	a.tmpl, a.budget = tmpl, req.MaxPromptChars
	run, goal, steps := sc.tc.run, sc.tc.goal, sc.tc.steps
	k := 0 // the number of the next text among the request's texts (shared.go)
	for _, m := range req.RunMessages {
		run = a.addCopy(m, run, k)
		k += len(m.Content)
	}
	a.runEnd = len(a.msgs)
	for i := range sc.chans { // in the request's order, before sortChannels
		sc.chans[i].k = k
		k += len(sc.chans[i].entries)
	}
	if nInj > 0 {
		a.injected = slices.Grow(sc.injected[:0], nInj)
		for _, c := range sortChannels(sc.chans) { // byte order = code-point order
			for j, e := range c.entries {
				a.injected = append(a.injected, Injected{Channel: c.name, EntryID: e.EntryID, MessageIndex: len(a.msgs)})
				chars := codePoints(e.Content)
				a.addText(RoleUser, e.Content, chars, c.k+j)
				a.addSize(len(userTextHead) + strSize(len(e.Content)) + uintSize(uint64(chars)))
			}
		}
	}
	a.injEnd = len(a.msgs)
	for _, m := range req.GoalMessages {
		goal = a.addCopy(m, goal, k)
		k += len(m.Content)
	}
	a.goalEnd = len(a.msgs)
	for i, s := range req.Steps {
		a.addStep(s, steps[2*i], steps[2*i+1], k+2*i)
	}
	sc.out, sc.injected = a.msgs, a.injected // so that release clears what was used
	return a
}

// channel is one injection channel: its name and entries.
type channel struct {
	name    string
	entries []Injection
	k       int // the number of its first entry's content among the request's texts (shared.go)
}

// appendChannels appends the channels of m to chans (in map order).
func appendChannels(chans []channel, m map[string][]Injection) []channel {
	for k, e := range m {
		chans = append(chans, channel{name: k, entries: e})
	}
	return chans
}

// sortChannels sorts chans by name in byte order (= code-point order), as
// an encoder that writes them sorted (EncodeRequest does) has already done:
// that is checked first. Names are distinct (the decoder rejects a
// channel sent twice).
func sortChannels(chans []channel) []channel {
	for i := 1; i < len(chans); i++ {
		if chans[i-1].name > chans[i].name {
			slices.SortFunc(chans, func(x, y channel) int { return strings.Compare(x.name, y.name) })
			break
		}
	}
	return chans
}

// addCopy adds a run or goal message; counts starts with the code points of
// its blocks. It returns counts past those blocks.
func (a *assembly) addCopy(m Message, counts []int, k int) []int {
	var chars int64
	for _, c := range counts[:len(m.Content)] {
		chars += int64(c)
	}
	counts = counts[len(m.Content):]
	a.msgs = append(a.msgs, outMsg{kind: kCopy, role: m.Role, blocks: m.Content, chars: chars, k: k})
	a.promptChars = addChars(a.promptChars, chars)
	a.addSize(a.msgs[len(a.msgs)-1].size())
	return counts
}

// addText adds a message of one text block of chars code points.
func (a *assembly) addText(role, text string, chars, k int) {
	a.msgs = append(a.msgs, outMsg{kind: kText, role: role, text: text, chars: int64(chars), k: k})
	a.promptChars = addChars(a.promptChars, int64(chars))
}

// addStep adds a step whose texts have rawChars and obsChars code points.
func (a *assembly) addStep(s Step, rawChars, obsChars, k int) {
	a.addText(RoleAssistant, s.RawOutput, rawChars, k)
	a.addSize(len(assistantTextHead) + strSize(len(s.RawOutput)) + uintSize(uint64(rawChars))) // outMsg.size, inlined
	var nb int
	var chars int64
	if t := a.tmpl; t.plain { // renderSize's first case, inlined
		k := len(t.fields)
		nb, chars = t.litBytes+k*len(s.Observation), t.litChars+int64(k)*int64(obsChars)
	} else {
		nb, chars = t.renderSize(s.Observation, int64(obsChars))
	}
	a.msgs = append(a.msgs, outMsg{kind: kObs, role: RoleUser, text: s.Observation, chars: chars, nbytes: nb, k: k + 1})
	a.promptChars = addChars(a.promptChars, chars)
	a.addSize(len(userTextHead) + strSize(nb) + uintSize(uint64(chars)))
}

// addSize adds n, what a message adds to the response, to a.body, which
// stops past maxResponse (n is below 2^62: no overflow).
func (a *assembly) addSize(n int) {
	a.body = min(a.body+n, maxResponse+1)
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
		Injected:        append([]Injected{}, a.injected...), // a copy (a lives in a scratch); empty, never nil
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
