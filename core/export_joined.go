package core

// The providers whose body joins consecutive same-role messages
// (docs/SPEC.md §7.13): Bedrock Converse. A provider of this kind is a row
// of joinedShapes: the keys and blocks of its body, encoded once; one
// writer (appendJoined) writes them all.

// ProviderBedrockConverse is AWS Bedrock Runtime's Converse API.
const ProviderBedrockConverse = "bedrock-converse"

// joinedShape is one provider's body: a top-level system list (the
// leading system messages' blocks) and a list of messages of {role,
// content}, each the blocks of a run of consecutive messages of one role.
type joinedShape struct {
	who     string // the provider's name in an error's message
	sysKey  string // the key of the system list, encoded
	listKey string // the key of the messages list
	content string // a message's head up to its role, and its content key
	roles   [2]string
	block   string // a text block up to its text
	mark    string // the block after a block at a breakpoint up to its options; "" for none
}

var bedrockShape = joinedShape{
	who:     "Bedrock's Converse",
	sysKey:  keySystem,
	listKey: keyMessages,
	content: keyContent,
	roles:   [2]string{RoleUser, RoleAssistant},
	block:   string(appendMapHeader(nil, 1)) + keyText,
	mark:    string(appendMapHeader(nil, 1)) + key("cachePoint"),
}

// cachePoint is Bedrock's cache point options: {"type": "default"}, and
// with the option ttl, "ttl" after it.
var cachePoint = string(appendMapHeader(nil, 1)) + keyType + key("default")

// joinedShapeOf is the row of provider, or nil.
func joinedShapeOf(provider string) *joinedShape {
	if provider == ProviderBedrockConverse {
		return &bedrockShape
	}
	return nil
}

// appendJoined writes the body of a provider of joinedShapes, a msgpack map.
func appendJoined(dst []byte, s *joinedShape, provider string, o *ExportOptions, a *assembly, v *View) ([]byte, *Error) {
	w := exportWriter{provider: provider, o: o, a: a, v: v}
	var err *Error
	if w.sys, err = leadingSystem(a, v, s.who); err != nil {
		return nil, err
	}
	if s.mark != "" {
		w.nbp = len(breakpoints(v, o, &w.bp))
	}
	if err = joinedRules(s, a, v, w.sys); err != nil {
		return nil, err
	}
	keys, body := 1, []byte(nil)
	if o.Body != nil {
		var n int
		if n, body, err = bodyFields(o.Body, provider); err != nil {
			return nil, err.within2("options.body")
		}
		keys += n
	}
	if w.sys > 0 {
		keys++
	}
	dst = append(appendAnyMapHeader(dst, keys), body...)
	if w.sys > 0 {
		dst = appendArrayHeader(append(dst, s.sysKey...), w.blocksIn(0, w.sys))
		dst = w.joinedBlocks(dst, s, 0, w.sys)
	}
	groups := 0
	for m := w.sys; m < len(v.Role); m = w.groupEnd(m) {
		groups++
	}
	dst = appendArrayHeader(append(dst, s.listKey...), groups)
	for m := w.sys; m < len(v.Role); {
		e := w.groupEnd(m)
		role := s.roles[0]
		if a.msgs[m].role == RoleAssistant {
			role = s.roles[1]
		}
		dst = appendStr(append(dst, msgHead...), role)
		dst = appendArrayHeader(append(dst, s.content...), w.blocksIn(m, e))
		dst = w.joinedBlocks(dst, s, m, e)
		m = e
	}
	return dst, nil
}

// groupEnd is the end of the run of messages of message m's role.
func (w *exportWriter) groupEnd(m int) int {
	e := m + 1
	for e < len(w.a.msgs) && w.a.msgs[e].role == w.a.msgs[m].role {
		e++
	}
	return e
}

// blocksIn counts the blocks of messages [m, e), with the cache points
// after the marked ones.
func (w *exportWriter) blocksIn(m, e int) int {
	lo, hi := w.v.BlockStart[m], w.v.BlockStart[e]
	n := hi - lo
	for _, b := range w.bp[:w.nbp] {
		if b >= lo && b < hi {
			n++
		}
	}
	return n
}

// joinedBlocks writes the blocks of messages [m, e), in order, each
// marked one followed by the shape's mark.
func (w *exportWriter) joinedBlocks(dst []byte, s *joinedShape, m, e int) []byte {
	for ; m < e; m++ {
		for j := range w.v.BlockStart[m+1] - w.v.BlockStart[m] {
			dst = w.text(append(dst, s.block...), m, j, 0)
			if w.marked(m, j) == 0 {
				continue
			}
			if dst = append(dst, s.mark...); w.o.TTL == "" {
				dst = append(dst, cachePoint...)
			} else {
				dst = appendStr(append(append(appendMapHeader(dst, 2), cachePoint[1:]...), keyTTL...), w.o.TTL)
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
)

// joinedRules checks the rules of a joined provider's API: the first
// offending text in prompt order, then the message groups, then the
// prompt as a whole.
func joinedRules(s *joinedShape, a *assembly, v *View, sys int) *Error {
	n := len(a.msgs)
	for m := range n {
		msg := &a.msgs[m]
		for j := range v.BlockStart[m+1] - v.BlockStart[m] {
			blank := false
			switch msg.kind {
			case kCopy:
				blank = isBlank(msg.blocks[j].Text)
			case kText:
				blank = isBlank(msg.text)
			default:
				blank = msg.nbytes == 0 || a.tmpl.rendersBlank(msg.text)
			}
			if blank {
				return newError(CodeMalformedRequest, textPath(a, v, m, j), s.who+msgJoinedBlankText)
			}
		}
	}
	if n == sys {
		return newError(CodeMalformedRequest, "request", s.who+msgJoinedNoMessage)
	}
	if a.msgs[sys].role == RoleAssistant {
		return newError(CodeMalformedRequest, textPath(a, v, sys, -1), s.who+msgJoinedAssistantFirst)
	}
	for m := sys; m < n; {
		e := m + 1
		for e < n && a.msgs[e].role == a.msgs[m].role {
			e++
		}
		if v.BlockStart[e] == v.BlockStart[m] {
			return newError(CodeMalformedRequest, textPath(a, v, m, -1), s.who+msgJoinedEmptyContent)
		}
		m = e
	}
	return nil
}
