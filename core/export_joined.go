package core

// Every provider's body is a row of one table (docs/SPEC.md §7.13): the keys
// and blocks of its body, encoded once (msgpack written out: the export
// vectors pin every byte), read by one writer (appendShaped). Bedrock
// Converse and Gemini join consecutive same-role messages; the others keep
// the prompt's messages.

// The providers whose body joins consecutive same-role messages: AWS
// Bedrock Runtime's Converse API, Gemini's generateContent and its
// cachedContents.
const (
	ProviderBedrockConverse = "bedrock-converse"
	ProviderGemini          = "gemini"
	ProviderGeminiCache     = "gemini-cache" // the cachedContents body of the stable prefix
)

// shape is one provider's body: an optional top-level system list (the
// leading system messages' blocks) and a list of messages, each a message
// of the prompt or, when join, the blocks of a run of consecutive messages
// of one role.
type shape struct {
	_        [0]func()    // not comparable: no equality code in the module
	who      string       // the provider's name in an error's message
	sysKey   string       // the key of the system list; "" when system messages stay messages
	listKey  string       // the key of the messages list
	heads    [3]string    // by role (user, assistant, system): a message up to its blocks' list
	blocks   [3][2]string // by role and mark: a block up to its text
	sysBlock [2]string    // by mark: a block of the system list up to its text
	marks    [3]string    // what follows a marked block's text, by ttl (ttlIndex); "" for none
	// markBlock: a mark is a block of its own (Bedrock's cachePoint); join:
	// consecutive messages of one role are one; openAI: prompt_cache_key and
	// the explicit breakpoints; prefix: the run and the injections only
	// (Gemini's cachedContents).
	markBlock, join, openAI, prefix bool
	// msgs are a joined shape's refusals' messages after who: a text, no
	// message, an assistant message first, an empty run; "" where the
	// provider has no such rule. blank: a text of whitespace only is refused
	// too.
	msgs  [4]string
	blank bool
	// own are the keys the body writes itself, which the option body may
	// not hold ("error" too: an answer with it reads as an error); an
	// option's key is added where it is given (bodyFields).
	own []string
	// one is, by role and mark, a message of one block up to its text: its
	// head, its list's header (of 2 when its mark is a block) and its
	// block, joined when compiled (the constants below).
	one [3][2]string
}

// The heads and blocks of the rows, as constants: a shape's one is made of
// them when compiled, no code at run time.
const (
	headUser          = "\x82\xa4role\xa4user\xa7content"
	headAssistant     = "\x82\xa4role\xa9assistant\xa7content"
	headSystem        = "\x82\xa4role\xa6system\xa7content"
	headGeminiUser    = "\x82\xa4role\xa4user\xa5parts"
	headGeminiModel   = "\x82\xa4role\xa5model\xa5parts"
	blockText         = "\x82\xa4type\xa4text\xa4text" // {type: text, text}; marked, 3 keys (the mark's last)
	blockTextMarked   = "\x83\xa4type\xa4text\xa4text"
	blockInput        = "\x82\xa4type\xaainput_text\xa4text"
	blockInputMarked  = "\x83\xa4type\xaainput_text\xa4text"
	blockOutput       = "\x82\xa4type\xaboutput_text\xa4text"
	blockOutputMarked = "\x83\xa4type\xaboutput_text\xa4text"
	blockBare         = "\x81\xa4text" // {text}: Bedrock's and Gemini's
	listOf1, listOf2  = "\x91", "\x92"
)

// The blocks of the providers that keep Anthropic's {type, text} block,
// by mark: a map of 2 keys, or 3 (the mark's last).
var (
	textBlock   = [2]string{blockText, blockTextMarked}
	inputBlock  = [2]string{blockInput, blockInputMarked}
	outputBlock = [2]string{blockOutput, blockOutputMarked}
	roleHeads   = [3]string{headUser, headAssistant, headSystem}
	textOne     = [3][2]string{
		{headUser + listOf1 + blockText, headUser + listOf1 + blockTextMarked},
		{headAssistant + listOf1 + blockText, headAssistant + listOf1 + blockTextMarked},
		{headSystem + listOf1 + blockText, headSystem + listOf1 + blockTextMarked},
	}
	// cacheControl is Anthropic's mark, by ttl.
	cacheControl = [3]string{
		"\xadcache_control\x81\xa4type\xa9ephemeral",
		"\xadcache_control\x82\xa4type\xa9ephemeral\xa3ttl\xa25m",
		"\xadcache_control\x82\xa4type\xa9ephemeral\xa3ttl\xa21h",
	}
	explicitMark    = "\xb7prompt_cache_breakpoint\x81\xa4mode\xa8explicit"
	explicitOptions = "\xb4prompt_cache_options\x81\xa4mode\xa8explicit"
)

var anthropicShape = shape{
	who: "Anthropic", sysKey: "\xa6system", listKey: "\xa8messages", heads: roleHeads,
	blocks: [3][2]string{textBlock, textBlock, textBlock}, sysBlock: textBlock, marks: cacheControl, one: textOne,
	own: []string{"messages", "system", "error"},
}

var openAIChatShape = shape{
	listKey: "\xa8messages", heads: roleHeads, blocks: [3][2]string{textBlock, textBlock, textBlock}, openAI: true,
	one: textOne, own: []string{"messages", "input", "prompt_cache_key", "error"},
}

var openAIResponsesShape = shape{
	listKey: "\xa5input", heads: roleHeads, blocks: [3][2]string{inputBlock, outputBlock, inputBlock}, openAI: true,
	one: [3][2]string{
		{headUser + listOf1 + blockInput, headUser + listOf1 + blockInputMarked},
		{headAssistant + listOf1 + blockOutput, headAssistant + listOf1 + blockOutputMarked},
		{headSystem + listOf1 + blockInput, headSystem + listOf1 + blockInputMarked},
	},
	own: []string{"messages", "input", "prompt_cache_key", "error"},
}

var openRouterShape = shape{
	listKey: "\xa8messages", heads: roleHeads, blocks: [3][2]string{textBlock, textBlock, textBlock}, marks: cacheControl,
	one: textOne, own: []string{"messages", "error"},
}

// bedrockText is a block of Bedrock and Gemini: {text}.
var bedrockText = [2]string{blockBare, blockBare}

var bedrockShape = shape{
	who:      "Bedrock's Converse",
	sysKey:   "\xa6system",
	listKey:  "\xa8messages",
	heads:    [3]string{headUser, headAssistant},
	blocks:   [3][2]string{bedrockText, bedrockText},
	sysBlock: bedrockText,
	marks: [3]string{"\x81\xaacachePoint\x81\xa4type\xa7default",
		"\x81\xaacachePoint\x82\xa4type\xa7default\xa3ttl\xa25m", "\x81\xaacachePoint\x82\xa4type\xa7default\xa3ttl\xa21h"},
	markBlock: true,
	join:      true,
	msgs:      [4]string{msgJoinedBlankText, msgJoinedNoMessage, msgJoinedAssistantFirst, msgJoinedEmptyContent},
	blank:     true,
	one: [3][2]string{{headUser + listOf1 + blockBare, headUser + listOf2 + blockBare},
		{headAssistant + listOf1 + blockBare, headAssistant + listOf2 + blockBare}},
	own: []string{"messages", "system", "error"},
}

// geminiShape: generateContent's systemInstruction {parts} and contents
// of {role: user or model, parts}; no cache points (its cache is implicit).
var geminiShape = shape{
	who:      "Gemini's generateContent",
	sysKey:   "\xb1systemInstruction\x81\xa5parts",
	listKey:  "\xa8contents",
	heads:    [3]string{headGeminiUser, headGeminiModel},
	blocks:   [3][2]string{bedrockText, bedrockText},
	sysBlock: bedrockText,
	join:     true,
	msgs:     [4]string{msgGeminiEmptyText, msgGeminiNoMessage, "", msgGeminiEmptyContent},
	one:      geminiOne,
	own:      []string{"contents", "systemInstruction", "error"},
}

// geminiOne is Gemini's one (no marks).
var geminiOne = [3][2]string{{headGeminiUser + listOf1 + blockBare}, {headGeminiModel + listOf1 + blockBare}}

// geminiCacheShape: the cachedContents create body (a CachedContent), in
// generateContent's shapes, of the prompt's stable prefix; no content is
// required (a cache of a systemInstruction alone is one).
var geminiCacheShape = shape{
	who:      "Gemini's cachedContents",
	sysKey:   geminiShape.sysKey,
	listKey:  geminiShape.listKey,
	heads:    geminiShape.heads,
	blocks:   geminiShape.blocks,
	sysBlock: bedrockText,
	join:     true,
	prefix:   true,
	msgs:     [4]string{msgGeminiEmptyText, "", "", msgGeminiEmptyContent},
	one:      geminiOne,
	own:      []string{"contents", "systemInstruction", "error"},
}

// Providers is every provider export writes, in the order the docs and the
// error messages list them: the one list the bindings' PROVIDERS, their
// Provider types and the preview's provider menu are generated from.
var Providers = []string{ProviderAnthropic, ProviderOpenAIChat, ProviderOpenAIResponses, ProviderOpenRouter,
	ProviderBedrockConverse, ProviderGemini, ProviderGeminiCache}

// shapes are the rows of Providers, in its order.
var shapes = [...]*shape{&anthropicShape, &openAIChatShape, &openAIResponsesShape, &openRouterShape, &bedrockShape,
	&geminiShape, &geminiCacheShape}

// shapeOf is the row of provider, or nil.
func shapeOf(provider string) *shape {
	for i, p := range Providers {
		if p == provider {
			return shapes[i]
		}
	}
	return nil
}

// keyCachedContent is generateContent's cachedContent, encoded.
const keyCachedContent = "\xadcachedContent"

// appendShaped writes the body of provider (of shape s), a msgpack map:
// the leading system messages as the system list (when s has one), then
// the messages [lo, hi) after them (the stable prefix for a prefix shape;
// after it, with no systemInstruction, when the option cached_content
// names the cache holding it).
func appendShaped(dst []byte, s *shape, provider string, o *ExportOptions, a *assembly, v *View) ([]byte, *Error) {
	w := exportWriter{o: o, a: a, v: v, mark: s.marks[ttlIndex(o.TTL)]}
	var err *Error
	if s.sysKey != "" {
		if w.sys, err = leadingSystem(a, v, s.who); err != nil {
			return nil, err
		}
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
	case s.openAI:
		keys++ // prompt_cache_key
		if o.Explicit {
			keys++ // prompt_cache_options
			w.mark = explicitMark
		}
	}
	if w.mark != "" {
		w.nbp = len(breakpoints(v, o, &w.bp))
		if s.openAI {
			w.offAssistant()
		}
	}
	groups := hi - lo // the entries of the list
	if s.join {
		groups, err = joinedRules(s, a, v, w.sys, lo, hi)
	} else {
		err = checkProviderRules(provider, a, v, w.sys)
	}
	if err != nil {
		return nil, err
	}
	if w.sys > 0 {
		keys++
	}
	if dst, err = appendBodyHead(dst, s, o, keys); err != nil {
		return nil, err
	}
	if w.sys > 0 {
		dst = w.list(append(dst, s.sysKey...), s, &s.sysBlock, 0, w.sys)
	}
	return w.tail(w.messages(dst, s, lo, hi, groups), s, cached), nil
}

// messages writes the list of the messages [lo, hi), of groups entries:
// each message, or each run of one role when s joins, its head and its
// blocks. A message of
// one block, most of a prompt's, is written in two appends, its head up
// to its text (s.one) and its text, and its mark when it has one.
func (w *exportWriter) messages(dst []byte, s *shape, lo, hi, groups int) []byte {
	role, start := w.v.Role, w.v.BlockStart
	dst = appendArrayHeader(append(dst, s.listKey...), groups)
	bp := w.bp[:w.nbp] // the marked blocks from here on: bp[0] is the next
	for len(bp) > 0 && bp[0] < start[lo] {
		bp = bp[1:]
	}
	for m := lo; m < hi; {
		r, e := role[m], w.end(s, m, hi)
		if e != m+1 || start[e]-start[m] != 1 {
			dst = w.list(append(dst, s.heads[r]...), s, &s.blocks[r], m, e)
			for len(bp) > 0 && bp[0] < start[e] {
				bp = bp[1:]
			}
			m = e
			continue
		}
		if len(bp) == 0 || bp[0] != start[m] {
			dst = w.text(append(dst, s.one[r][0]...), m, 0)
		} else {
			dst = append(w.text(append(dst, s.one[r][1]...), m, 0), w.mark...)
			bp = bp[1:]
		}
		m = e
	}
	return dst
}

// tail writes the keys after the messages: OpenAI's cache key (and its
// explicit mode), or the name of Gemini's cache.
func (w *exportWriter) tail(dst []byte, s *shape, cached bool) []byte {
	if s.openAI {
		key := w.a.runDigest()
		if w.o.hasCacheKey {
			key = w.o.CacheKey
		}
		dst = appendStr(append(dst, keyPromptCacheKey...), key)
		if w.o.Explicit {
			dst = append(dst, explicitOptions...)
		}
	}
	if cached { // the cache's name last
		dst = appendStr(append(dst, keyCachedContent...), w.o.CachedContent)
	}
	return dst
}

// end is the end of message m's entry in the list: the next message, or
// the end of the run of messages of its role (at most hi) when s joins.
func (w *exportWriter) end(s *shape, m, hi int) int {
	e := m + 1
	for s.join && e < hi && w.v.Role[e] == w.v.Role[m] {
		e++
	}
	return e
}

// list writes the blocks of messages [m, e) as a list, in order: each its
// head (block, by mark) and its text, a marked one followed by the mark.
func (w *exportWriter) list(dst []byte, s *shape, block *[2]string, m, e int) []byte {
	lo, hi := w.v.BlockStart[m], w.v.BlockStart[e]
	n := hi - lo
	if s.markBlock {
		for _, b := range w.bp[:w.nbp] {
			if b >= lo && b < hi {
				n++
			}
		}
	}
	dst = appendArrayHeader(dst, n)
	for ; m < e; m++ {
		for j := range w.v.BlockStart[m+1] - w.v.BlockStart[m] {
			mark := w.marked(m, j)
			k := mark
			if s.markBlock {
				k = 0
			}
			dst = w.text(append(dst, block[k]...), m, j)
			if mark == 1 {
				dst = append(dst, w.mark...)
			}
		}
	}
	return dst
}

// shapeRoles are the roles by their index in a shape's heads and blocks.
var shapeRoles = []string{RoleUser, RoleAssistant, RoleSystem}

// The indices of the roles in shapeRoles.
const (
	roleUser = iota
	roleAssistant
	roleSystem
)

// roleIndex is role's index in a shape's heads and blocks.
// A role is one of the three (the decoder refuses any other): its length
// tells which, without comparing its bytes.
func roleIndex(role string) int {
	switch len(role) {
	case len(RoleUser):
		return roleUser
	case len(RoleAssistant):
		return roleAssistant
	}
	return roleSystem
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
// prompt as a whole. It returns the number of groups (runs of one role).
func joinedRules(s *shape, a *assembly, v *View, sys, lo, hi int) (groups int, _ *Error) {
	obsBlank := s.blank && a.tmpl != nil && a.tmpl.literalsBlank() // else no observation is refused as blank
	for m := 0; m < hi; m++ {
		if m == sys && m < lo {
			m = lo // [sys, lo) is not sent: the cache holds it
			if m == hi {
				break
			}
		}
		msg := &a.msgs[m]
		j := 0 // the offending block
		if msg.kind == kText {
			if !blankText(msg.text, s.blank) {
				continue
			}
		} else if msg.kind == kObs {
			if msg.nbytes != 0 && !(obsBlank && a.tmpl.rendersBlank(msg.text)) {
				continue
			}
		} else {
			for j = 0; j < len(msg.blocks) && !blankText(msg.blocks[j].Text, s.blank); j++ {
			}
			if j == len(msg.blocks) {
				continue
			}
		}
		return 0, newError(CodeMalformedRequest, textPath(a, v, m, j), s.who+s.msgs[0])
	}
	if lo == hi {
		if s.msgs[1] == "" {
			return 0, nil
		}
		return 0, newError(CodeMalformedRequest, "request", s.who+s.msgs[1])
	}
	if s.msgs[2] != "" && v.Role[lo] == roleAssistant {
		return 0, newError(CodeMalformedRequest, textPath(a, v, lo, -1), s.who+s.msgs[2])
	}
	for m := lo; m < hi; {
		e := m + 1
		for e < hi && v.Role[e] == v.Role[m] {
			e++
		}
		if v.BlockStart[e] == v.BlockStart[m] {
			return 0, newError(CodeMalformedRequest, textPath(a, v, m, -1), s.who+s.msgs[3])
		}
		m, groups = e, groups+1
	}
	return groups, nil
}
