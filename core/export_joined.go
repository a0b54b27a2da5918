package core

// The providers whose body joins consecutive same-role messages
// (docs/SPEC.md §7.13): Bedrock Converse and Gemini. A provider of this kind is a row
// of joinedShapes: the keys and blocks of its body, encoded once; one
// writer (appendJoined) writes them all.

// The joined providers: AWS Bedrock Runtime's Converse API, Gemini's
// generateContent.
const (
	ProviderBedrockConverse = "bedrock-converse"
	ProviderGemini          = "gemini"
	ProviderGeminiCache     = "gemini-cache" // the cachedContents body of the stable prefix
)

// joinedShape is one provider's body: a top-level system list (the
// leading system messages' blocks) and a list of messages of {role,
// content}, each the blocks of a run of consecutive messages of one role.
type joinedShape struct {
	_       [0]func() // not comparable: no equality code in the module
	who     string    // the provider's name in an error's message
	sysKey  string    // the key of the system list, encoded
	listKey string    // the key of the messages list
	heads   [2]string // a user's and an assistant's message up to its blocks' list
	block   string    // a text block up to its text
	marks   [3]string // the block after a block at a breakpoint, by ttl ("", 5m, 1h); "" for none
	// msgs are the refusals' messages after who: a text, no message, an
	// assistant message first, an empty run; "" where the provider has no
	// such rule. blank: a text of whitespace only is refused too.
	msgs   [4]string
	blank  bool
	prefix bool // the body holds the run and the injections only (Gemini's cachedContents)
}

// bedrockShape's strings are msgpack written out (TestJoinedShapesEncoded
// checks them), so that the table is data, not code run at start.
var bedrockShape = joinedShape{
	who:     "Bedrock's Converse",
	sysKey:  "\xa6system",
	listKey: "\xa8messages",
	heads:   [2]string{"\x82\xa4role\xa4user\xa7content", "\x82\xa4role\xa9assistant\xa7content"},
	block:   "\x81\xa4text",
	marks: [3]string{"\x81\xaacachePoint\x81\xa4type\xa7default",
		"\x81\xaacachePoint\x82\xa4type\xa7default\xa3ttl\xa25m", "\x81\xaacachePoint\x82\xa4type\xa7default\xa3ttl\xa21h"},
	msgs:  [4]string{msgJoinedBlankText, msgJoinedNoMessage, msgJoinedAssistantFirst, msgJoinedEmptyContent},
	blank: true,
}

// geminiShape: generateContent's systemInstruction {parts} and contents
// of {role: user or model, parts}; no cache points (its cache is implicit).
var geminiShape = joinedShape{
	who:     "Gemini's generateContent",
	sysKey:  "\xb1systemInstruction\x81\xa5parts",
	listKey: "\xa8contents",
	heads:   [2]string{"\x82\xa4role\xa4user\xa5parts", "\x82\xa4role\xa5model\xa5parts"},
	block:   "\x81\xa4text",
	msgs:    [4]string{msgGeminiEmptyText, msgGeminiNoMessage, "", msgGeminiEmptyContent},
}

// geminiCacheShape: the cachedContents create body (a CachedContent), in
// generateContent's shapes, of the prompt's stable prefix; no content is
// required (a cache of a systemInstruction alone is one).
var geminiCacheShape = joinedShape{
	who:     "Gemini's cachedContents",
	sysKey:  geminiShape.sysKey,
	listKey: geminiShape.listKey,
	heads:   geminiShape.heads,
	block:   geminiShape.block,
	msgs:    [4]string{msgGeminiEmptyText, "", "", msgGeminiEmptyContent},
	prefix:  true,
}

// joinedShapeOf is the row of provider, or nil.
func joinedShapeOf(provider string) *joinedShape {
	switch provider {
	case ProviderBedrockConverse:
		return &bedrockShape
	case ProviderGemini:
		return &geminiShape
	case ProviderGeminiCache:
		return &geminiCacheShape
	}
	return nil
}

// keyCachedContent is generateContent's cachedContent, encoded.
const keyCachedContent = "\xadcachedContent"

// appendJoined writes the body of a provider of joinedShapes, a msgpack map:
// the messages [lo, hi) after the leading system ones (the stable prefix
// for a prefix shape; after it, with no systemInstruction, when the option
// cached_content names the cache holding it).
func appendJoined(dst []byte, s *joinedShape, provider string, o *ExportOptions, a *assembly, v *View) ([]byte, *Error) {
	w := exportWriter{provider: provider, o: o, a: a, v: v}
	var err *Error
	if w.sys, err = leadingSystem(a, v, s.who); err != nil {
		return nil, err
	}
	lo, hi, keys := w.sys, len(v.Role), 1
	cached := o.hasCachedContent && !s.prefix
	if (s.prefix || cached) && w.sys > v.InjectionsEnd {
		return nil, newError(CodeMalformedRequest, requestPathOf(v, v.InjectionsEnd), msgGeminiCachedSystem)
	}
	switch {
	case s.prefix:
		hi = v.InjectionsEnd
	case cached:
		lo, w.sys, keys = v.InjectionsEnd, 0, 2
	}
	mark := s.marks[ttlIndex(o.TTL)]
	if mark != "" {
		w.nbp = len(breakpoints(v, o, &w.bp))
	}
	if err = joinedRules(s, a, v, w.sys, lo, hi); err != nil {
		return nil, err
	}
	if w.sys > 0 {
		keys++
	}
	if dst, err = appendBodyHead(dst, provider, o, keys); err != nil {
		return nil, err
	}
	if w.sys > 0 {
		dst = w.joinedList(append(dst, s.sysKey...), s.block, mark, 0, w.sys)
	}
	groups := 0
	for m := lo; m < hi; m = w.groupEnd(m, hi) {
		groups++
	}
	dst = appendArrayHeader(append(dst, s.listKey...), groups)
	for m := lo; m < hi; m = w.groupEnd(m, hi) {
		r := 0
		if a.msgs[m].role == RoleAssistant {
			r = 1
		}
		dst = w.joinedList(append(dst, s.heads[r]...), s.block, mark, m, w.groupEnd(m, hi))
	}
	if cached { // the cache's name last
		dst = appendStr(append(dst, keyCachedContent...), o.CachedContent)
	}
	return dst, nil
}

// groupEnd is the end of the run of messages of message m's role, at
// most hi.
func (w *exportWriter) groupEnd(m, hi int) int {
	e := m + 1
	for e < hi && w.a.msgs[e].role == w.a.msgs[m].role {
		e++
	}
	return e
}

// joinedList writes the blocks of messages [m, e) as a list, in order:
// each a block head and its text, a marked one followed by mark.
func (w *exportWriter) joinedList(dst []byte, block, mark string, m, e int) []byte {
	lo, hi := w.v.BlockStart[m], w.v.BlockStart[e]
	n := hi - lo
	for _, b := range w.bp[:w.nbp] {
		if b >= lo && b < hi {
			n++
		}
	}
	dst = appendArrayHeader(dst, n)
	for ; m < e; m++ {
		for j := range w.v.BlockStart[m+1] - w.v.BlockStart[m] {
			dst = w.text(append(dst, block...), m, j, 0)
			if w.marked(m, j) == 1 {
				dst = append(dst, mark...)
			}
		}
	}
	return dst
}

// The refusals of the joined providers' rules (docs/SPEC.md §7.13 lists them
// with their sources); each message begins with the provider's name.
const (
	msgJoinedBlankText = " refuses a text block that is empty or of whitespace only (ValidationException \"The text " +
		"field in the ContentBlock object … is blank\"); write at least one character that is not whitespace in this " +
		"text: the export sends every text as it is"
	msgJoinedEmptyContent = " refuses a message with no content block, and this message and the messages of its role " +
		"next to it (joined into one) have none; give this message a text block, or leave the message out"
	msgJoinedAssistantFirst = " refuses a conversation that starts with an assistant message (ValidationException \"A " +
		"conversation must start with a user message\"); put a user message (a goal message) before it"
	msgJoinedNoMessage = " needs a user or assistant message besides its top-level system, and this prompt has none; " +
		"add a goal message"
	msgGeminiEmptyText = " refuses an empty text part (400 \"required oneof field 'data' must have one initialized " +
		"field\"); write at least one character in this text: the export sends every text as it is"
	msgGeminiNoMessage = " needs a user or model content besides its systemInstruction (400 \"contents is not " +
		"specified\"), and this prompt has none; add a goal message"
	msgGeminiCachedSystem = "Gemini's generateContent takes no systemInstruction beside a cachedContent (400 \"CachedContent " +
		"can not be used with GenerateContent request setting system_instruction, tools or tool_config\"), and this " +
		"system message is not in the run or the injections, which the cache holds; move it to the start of " +
		"run_messages"
	msgGeminiEmptyContent = " refuses a content with no part (400 \"contents.parts must not be empty\"), and this " +
		"message and the messages of its role next to it (joined into one) have none; give this message a text " +
		"block, or leave the message out"
)

// joinedRules checks the rules of a joined provider's API on what the body
// holds, the sys leading system messages and the messages [lo, hi): the
// first offending text in prompt order, then the message groups, then the
// prompt as a whole.
func joinedRules(s *joinedShape, a *assembly, v *View, sys, lo, hi int) *Error {
	for m := 0; m < hi; m++ {
		if m == sys && m < lo {
			m = lo // [sys, lo) is not sent: the cache holds it
			if m == hi {
				break
			}
		}
		msg := &a.msgs[m]
		for j := range v.BlockStart[m+1] - v.BlockStart[m] {
			var empty, blank bool
			if msg.kind == kObs {
				empty = msg.nbytes == 0
				blank = empty || s.blank && a.tmpl.rendersBlank(msg.text)
			} else {
				t := msg.text
				if msg.kind == kCopy {
					t = msg.blocks[j].Text
				}
				empty = t == ""
				blank = empty || s.blank && isBlank(t)
			}
			if blank {
				return newError(CodeMalformedRequest, textPath(a, v, m, j), s.who+s.msgs[0])
			}
		}
	}
	if lo == hi {
		if s.msgs[1] == "" {
			return nil
		}
		return newError(CodeMalformedRequest, "request", s.who+s.msgs[1])
	}
	if s.msgs[2] != "" && a.msgs[lo].role == RoleAssistant {
		return newError(CodeMalformedRequest, textPath(a, v, lo, -1), s.who+s.msgs[2])
	}
	for m := lo; m < hi; {
		e := m + 1
		for e < hi && a.msgs[e].role == a.msgs[m].role {
			e++
		}
		if v.BlockStart[e] == v.BlockStart[m] {
			return newError(CodeMalformedRequest, textPath(a, v, m, -1), s.who+s.msgs[3])
		}
		m = e
	}
	return nil
}
