package core

import "unicode/utf8"

// The provider rules a prompt alone can break (docs/SPEC.md §7.13, "Refused
// before it is sent"): a body that breaks one is answered 400 by the
// provider, so the export answers malformed_request at the request path of
// the text instead of writing it. Nothing is dropped, filled or trimmed to
// make a body pass (RATIONALE.md, "Refuse, never fix, a body the provider
// refuses"). The check reads every text once, mostly its first byte, and
// allocates nothing unless it refuses.

// The refusals' messages, one per rule (docs/SPEC.md §7.13 lists them with
// their sources).
const (
	msgAnthropicEmptyText = "Anthropic refuses an empty text block (400 \"text content blocks must be non-empty\"; " +
		"\"cache_control cannot be set for empty text blocks\" at a breakpoint); write at least one character " +
		"that is not whitespace in this text: the export sends every text as it is"
	msgAnthropicBlankText = "Anthropic refuses a text block of whitespace only (400 \"text content blocks must contain " +
		"non-whitespace text\"); write at least one character that is not whitespace in this text: the export " +
		"sends every text as it is"
	msgAnthropicEmptyContent = "Anthropic refuses a message with no content block unless it is the final assistant " +
		"message (400 \"all messages must have non-empty content except for the optional final assistant " +
		"message\"); give this message a text block, or leave the message out"
	msgAnthropicTrailingSpace = "Anthropic refuses a final assistant message that ends in whitespace (400 \"final " +
		"assistant content cannot end with trailing whitespace\"); end this text without whitespace, or follow " +
		"the message with a user message"
	msgAnthropicNoMessage = "Anthropic needs a user or assistant message besides its top-level system (400 " +
		"\"messages: at least one message is required\"), and this prompt has none; add a goal message"
	msgOpenAIChatNoMessage = "OpenAI's Chat Completions needs at least one message (400 \"Invalid 'messages': empty " +
		"array\"), and this prompt has none; add a run or goal message"
)

// checkProviderRules refuses a prompt that breaks a rule of the provider's
// API, before any body is written: the first offending text in prompt
// order (a message's blocks, then the message itself), then the prompt as a
// whole. sys is the number of leading system messages (Anthropic's
// top-level system; 0 for OpenAI).
func checkProviderRules(provider string, a *assembly, v *View, sys int) *Error {
	switch provider {
	case ProviderAnthropic:
		return anthropicRules(a, v, sys)
	case ProviderOpenAIChat:
		if len(v.Role) == 0 {
			return newError(CodeMalformedRequest, "request", msgOpenAIChatNoMessage)
		}
	}
	return nil
}

// anthropicRules checks the rules of Anthropic's Messages API.
func anthropicRules(a *assembly, v *View, sys int) *Error {
	n := len(a.msgs)
	lits := a.tmpl != nil && a.tmpl.literalsBlank() // else no observation renders blank
	for m := range n {
		msg := &a.msgs[m]
		switch msg.kind {
		case kCopy:
			for j := range msg.blocks {
				if !blankText(msg.blocks[j].Text, true) {
					continue
				}
				if why := blankMessage(msg.blocks[j].Text); why != "" {
					return newError(CodeMalformedRequest, textPath(a, v, m, j), why)
				}
			}
			if m < sys { // a block of the top-level system
				continue
			}
			final := m == n-1 && msg.role == RoleAssistant
			if k := len(msg.blocks); k == 0 && !final {
				return newError(CodeMalformedRequest, textPath(a, v, m, -1), msgAnthropicEmptyContent)
			} else if k > 0 && final && endsInWhiteSpace(msg.blocks[k-1].Text) {
				return newError(CodeMalformedRequest, textPath(a, v, m, k-1), msgAnthropicTrailingSpace)
			}
		case kText: // one block: an injection (a user's) or a raw_output (its observation follows)
			if !blankText(msg.text, true) {
				continue
			}
			if why := blankMessage(msg.text); why != "" {
				return newError(CodeMalformedRequest, textPath(a, v, m, 0), why)
			}
		default: // kObs: the rendered observation
			if msg.nbytes == 0 {
				return newError(CodeMalformedRequest, textPath(a, v, m, 0), msgAnthropicEmptyText)
			}
			if lits && a.tmpl.rendersBlank(msg.text) {
				return newError(CodeMalformedRequest, textPath(a, v, m, 0), msgAnthropicBlankText)
			}
		}
	}
	if n == sys {
		return newError(CodeMalformedRequest, "request", msgAnthropicNoMessage)
	}
	return nil
}

// blankMessage is the refusal's message for a text that is empty or of
// whitespace only, else "".
func blankMessage(s string) string {
	switch {
	case s == "":
		return msgAnthropicEmptyText
	case isBlank(s):
		return msgAnthropicBlankText
	}
	return ""
}

// textPath is the request path (docs/SPEC.md §2.2, under "request") of
// block j of message m of the prompt, or of the message's content list
// when j < 0: a run or goal block's text, an injection's content, a step's
// raw_output (an even message after the goal) or observation (an odd one).
func textPath(a *assembly, v *View, m, j int) string {
	content := func() string {
		if j < 0 {
			return ".content"
		}
		return ".content" + indexSeg(j) + ".text"
	}
	switch {
	case m < v.RunEnd:
		return "request.run_messages" + indexSeg(m) + content()
	case m < v.InjectionsEnd:
		for i, in := range a.injected {
			if in.MessageIndex != m {
				continue
			}
			k := 0 // the entry's index in its channel: the entries before it there
			for _, prev := range a.injected[:i] {
				if prev.Channel == in.Channel {
					k++
				}
			}
			return "request.injections" + channelSeg(in.Channel) + indexSeg(k) + ".content"
		}
		return "request.injections"
	case m < v.GoalEnd:
		return "request.goal_messages" + indexSeg(m-v.InjectionsEnd) + content()
	}
	s := m - v.GoalEnd
	if s%2 == 0 {
		return "request.steps" + indexSeg(s/2) + ".raw_output"
	}
	return "request.steps" + indexSeg(s/2) + ".observation"
}

// isWhiteSpace reports whether r has Unicode's White_Space property
// (PropList.txt; the same since Unicode 6.3 took U+180E out): U+0009–U+000D, U+0020,
// U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F,
// U+3000. Not U+001C–U+001F (Python's str.isspace takes them), U+200B or
// U+FEFF (docs/SPEC.md §7.13, RATIONALE.md).
func isWhiteSpace(r rune) bool {
	switch {
	case r <= ' ':
		return r == ' ' || r >= '\t' && r <= '\r'
	case r < 0x85:
		return false
	case r <= 0xa0:
		return r == 0x85 || r == 0xa0
	case r < 0x1680:
		return false
	}
	return r == 0x1680 || r >= 0x2000 && r <= 0x200a || r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000
}

// blankText reports whether s is empty or, when blank, may be of white
// space only: isBlank, unless its first byte is a character of ASCII
// that is not (most texts), decided without a call.
func blankText(s string, blank bool) bool {
	return s == "" || blank && (s[0] <= ' ' || s[0] >= utf8.RuneSelf) && isBlank(s)
}

// isBlank reports whether every code point of s (valid UTF-8) is white
// space; true for "".
func isBlank(s string) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c != ' ' && (c < '\t' || c > '\r') {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isWhiteSpace(r) {
			return false
		}
		i += size
	}
	return true
}

// endsInWhiteSpace reports whether s ends in a white space code point.
func endsInWhiteSpace(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && isWhiteSpace(r)
}

// rendersBlank reports whether t.format(observation=obs) is of white space
// only (or empty), without rendering it: every literal is, and every field
// writes only blank fill around a blank prefix of the observation (a !r or
// !a field that keeps a code point starts with a quote).
func (t *Template) rendersBlank(obs string) bool {
	if !t.literalsBlank() {
		return false
	}
	if len(t.fields) == 0 {
		return true
	}
	if t.plain {
		return isBlank(obs)
	}
	obsChars := int64(-1)
	for i := range t.kinds {
		f := &t.kinds[i]
		switch {
		case f.conv != convNone:
			// a repr starts with a quote: blank only when a precision of 0
			// keeps none of it, and then the width (> 0: the field is not
			// silent) is all fill
			if !f.formatted || f.prec != 0 || !isBlank(f.fill) {
				return false
			}
		case !f.formatted:
			if !isBlank(obs) {
				return false
			}
		default:
			if obsChars < 0 {
				obsChars = countRunes(obs)
			}
			keep, lpad, rpad := f.layout(obsChars)
			if lpad+rpad > 0 && !isBlank(f.fill) || !isBlank(obs[:prefixBytes(obs, keep)]) {
				return false
			}
		}
	}
	return true
}

// literalsBlank reports whether every literal of t is of white space only
// (or empty): else no rendering of it is.
func (t *Template) literalsBlank() bool {
	if !isBlank(t.tail) {
		return false
	}
	for i := range t.fields {
		if !isBlank(t.fields[i].lit) {
			return false
		}
	}
	return true
}
