package core

import (
	"strconv"

	"github.com/polyloop/assembly/core/msgp"
)

// The prompt form (docs/SPEC.md §7.14): an assembled prompt as a host's
// incremental prompt holds it, {messages, segments, injected}, taken by
// export, cache_report, cache_call and compare wherever they take a
// request. Its messages are copied as they are, so a prompt's export,
// digests and comparison are those of the request it was assembled from,
// without assembling the history again.

// Segments are the message indexes where the run, injection and goal
// segments of a prompt end (docs/SPEC.md §3); the history follows.
type Segments struct {
	RunEnd, InjectionsEnd, GoalEnd int
}

// append appends the segments key and its map, as prompt_start answers it.
func (s Segments) append(dst []byte) []byte {
	dst = appendMapHeader(append(dst, keySegments...), 3)
	dst = appendUint(append(dst, keyRunEnd...), uint64(s.RunEnd))
	dst = appendUint(append(dst, keyInjectionsEnd...), uint64(s.InjectionsEnd))
	return appendUint(append(dst, keyGoalEnd...), uint64(s.GoalEnd))
}

var (
	keySegments      = key("segments")
	keyRunEnd        = key("run_end")
	keyInjectionsEnd = key("injections_end")
	keyGoalEnd       = key("goal_end")
)

// isPromptForm reports whether b, a msgpack map, is a prompt form: its
// first key is one of the form's (messages, segments, injected), none of
// which a request has (a request holding one is unknown_field at it).
func isPromptForm(b []byte) bool {
	n, b, err := readMapHeader(b)
	if err != nil || n == 0 {
		return false
	}
	key, _, err := readKey(b)
	return err == nil && (key == "segments" || key == "messages" || key == "injected")
}

// planAny lays out the assembly of a request or of a prompt form (one
// value, nothing after it).
func planAny(req []byte, sc *scratch) (*assembly, *Error) {
	if len(req) > 0 && msgp.NextType(req) == msgp.MapType && isPromptForm(req) {
		a, rest, err := planPromptForm(req, sc)
		if err == nil && len(rest) != 0 {
			err = newError(CodeMalformedRequest, "", "bytes follow the prompt; send one map")
		}
		return a, err
	}
	_, a, _, err := planRequest(req, sc)
	return a, err
}

// planPromptForm reads the prompt form at the start of b into sc.a: every
// message a copy of its blocks. It returns the bytes after it.
func planPromptForm(b []byte, sc *scratch) (*assembly, []byte, *Error) {
	a, rest, err := readPromptForm(b, sc)
	if err != nil {
		err.Path = trimDot(err.Path) // a path within the prompt, as of a request (docs/SPEC.md §2.2)
	}
	return a, rest, err
}

func readPromptForm(b []byte, sc *scratch) (*assembly, []byte, *Error) {
	n, b, err := readMapHeader(b)
	if err != nil {
		return nil, b, err
	}
	var msgs []Message
	var counts []int
	var seg Segments
	var injected []Injected
	var seen [3]bool
	for range n {
		var key string
		if key, b, err = readKey(b); err != nil {
			return nil, b, err
		}
		k := 0
		switch key {
		case "messages":
			msgs, b, err = decodeMessages(b, &counts, sc)
		case "segments":
			k = 1
			b, err = seg.read(b)
		case "injected":
			k = 2
			injected, b, err = readInjected(b)
		default:
			return nil, b, unknownField(key, "a prompt", "messages, segments, injected")
		}
		if seen[k] {
			return nil, b, duplicateKey(key)
		}
		seen[k] = true
		if err != nil {
			return nil, b, err.within(fieldSeg(key))
		}
	}
	if !seen[0] {
		return nil, b, missingField("messages", "a prompt")
	}
	if !seen[1] {
		return nil, b, missingField("segments", "a prompt")
	}
	if err := seg.check(msgs, injected, seen[2]); err != nil {
		return nil, b, err
	}
	return copiedAssembly(sc, msgs, counts, seg, injected), b, nil
}

// copiedAssembly lays out msgs in sc.a, each a copy of its blocks (counts:
// each block's code points, in order).
func copiedAssembly(sc *scratch, msgs []Message, counts []int, seg Segments, injected []Injected) *assembly {
	a := &sc.a
	a.msgs = sc.out[:0]
	at := 0
	for _, m := range msgs {
		var chars int64
		for range m.Content {
			chars += int64(counts[at])
			at++
		}
		a.msgs = append(a.msgs, outMsg{kind: kCopy, role: m.Role, blocks: m.Content, chars: chars})
		a.promptChars += chars
	}
	sc.out = a.msgs
	a.runEnd, a.injEnd, a.goalEnd = seg.RunEnd, seg.InjectionsEnd, seg.GoalEnd
	a.injected = injected
	return a
}

// read reads the segments map: run_end, injections_end and goal_end, each
// an int ≥ 0.
func (s *Segments) read(b []byte) ([]byte, *Error) {
	n, b, err := readMapHeader(b)
	if err != nil {
		return b, err
	}
	var seen [3]bool
	for range n {
		var key string
		if key, b, err = readKey(b); err != nil {
			return b, err
		}
		var k int
		switch key {
		case "run_end":
		case "injections_end":
			k = 1
		case "goal_end":
			k = 2
		default:
			return b, unknownField(key, "a prompt's segments", "run_end, injections_end, goal_end")
		}
		if seen[k] {
			return b, duplicateKey(key)
		}
		seen[k] = true
		var v uint64
		if v, b, err = readUintOpt(b); err != nil {
			return b, err.within(fieldSeg(key))
		}
		*[3]*int{&s.RunEnd, &s.InjectionsEnd, &s.GoalEnd}[k] = int(min(v, 1<<31))
	}
	for k, name := range [3]string{"run_end", "injections_end", "goal_end"} {
		if !seen[k] {
			return b, missingField(name, "a prompt's segments")
		}
	}
	return b, nil
}

// check is the rule of a prompt's layout (docs/SPEC.md §3): the ends in
// order within the messages; each injection and history message one text
// block of its role (user; assistant then user per step); the injected
// entries, when given, one per injection message, in order.
func (s Segments) check(msgs []Message, injected []Injected, haveInjected bool) *Error {
	n := len(msgs)
	if s.RunEnd > s.InjectionsEnd || s.InjectionsEnd > s.GoalEnd || s.GoalEnd > n {
		return newError(CodeMalformedRequest, "segments", "the segment ends must satisfy run_end ≤ injections_end ≤ goal_end ≤ the number of messages ("+strconv.Itoa(n)+"); give a Prompt's own segments")
	}
	if (n-s.GoalEnd)%2 != 0 {
		return newError(CodeMalformedRequest, "messages", "the history after goal_end holds "+strconv.Itoa(n-s.GoalEnd)+" messages; a step is two (assistant, then user)")
	}
	for m := s.RunEnd; m < n; m++ {
		if m >= s.InjectionsEnd && m < s.GoalEnd {
			continue
		}
		role := RoleUser
		if m >= s.GoalEnd && (m-s.GoalEnd)%2 == 0 {
			role = RoleAssistant
		}
		if msgs[m].Role != role || len(msgs[m].Content) != 1 {
			what := "an injection is one user message of one text block"
			if m >= s.GoalEnd {
				what = "a step is an assistant message, then a user message, each of one text block"
			}
			return newError(CodeMalformedRequest, "messages"+indexSeg(m), "message "+strconv.Itoa(m)+" does not fit its segment: "+what)
		}
	}
	if haveInjected {
		if len(injected) != s.InjectionsEnd-s.RunEnd {
			return newError(CodeMalformedRequest, "injected", "injected holds "+strconv.Itoa(len(injected))+" entries for "+strconv.Itoa(s.InjectionsEnd-s.RunEnd)+" injection messages; give a Prompt's own")
		}
		for k, e := range injected {
			if e.MessageIndex != s.RunEnd+k {
				return newError(CodeMalformedRequest, "injected"+indexSeg(k)+".message_index", "the injected entries name the injection messages in order, from run_end")
			}
		}
	}
	return nil
}

// readInjected reads a response's injected list: {channel, entry_id,
// message_index} per entry.
func readInjected(b []byte) ([]Injected, []byte, *Error) {
	n, b, err := readArrayHeader(b)
	if err != nil {
		return nil, b, err
	}
	out := make([]Injected, 0, min(n, maxHint))
	for i := range n {
		var e Injected
		var m uint32
		if m, b, err = readMapHeader(b); err != nil {
			return nil, b, err.within(indexSeg(int(i)))
		}
		var seen [3]bool
		for range m {
			var key string
			if key, b, err = readKey(b); err != nil {
				return nil, b, err.within(indexSeg(int(i)))
			}
			var k int
			switch key {
			case "channel":
				e.Channel, b, err = readStr(b)
			case "entry_id":
				k = 1
				e.EntryID, b, err = readStr(b)
			case "message_index":
				k = 2
				var v uint64
				v, b, err = readUintOpt(b)
				e.MessageIndex = int(min(v, 1<<31))
			default:
				return nil, b, unknownField(key, "an injected entry", "channel, entry_id, message_index").within(indexSeg(int(i)))
			}
			if seen[k] {
				return nil, b, duplicateKey(key).within(indexSeg(int(i)))
			}
			seen[k] = true
			if err != nil {
				return nil, b, err.within(fieldSeg(key)).within(indexSeg(int(i)))
			}
		}
		for k, name := range [3]string{"channel", "entry_id", "message_index"} {
			if !seen[k] {
				return nil, b, missingField(name, "an injected entry").within(indexSeg(int(i)))
			}
		}
		out = append(out, e)
	}
	return out, b, nil
}

// AppendForm appends the prompt's prompt form as it is now (docs/SPEC.md
// §7.14): what Export, CacheReportOf, Compare and a CacheRun take for the
// Prompt wherever they take a request.
func (p *Prompt) AppendForm(dst []byte) []byte {
	return AppendPromptForm(dst, p.resp, len(p.resp.Messages), p.seg)
}

// AppendExport appends the provider's request body for the prompt as it
// is now (docs/SPEC.md §7.13), a msgpack map, as the export call answers
// it for the request with the steps so far, without assembling the
// history again; o nil is the default options. An error is the export's
// (its path a request path: request.steps[3].raw_output).
func (p *Prompt) AppendExport(dst []byte, provider string, o *ExportOptions) ([]byte, *Error) {
	if err := knownProvider(provider); err != nil {
		return dst, err
	}
	opts := ExportOptions{MaxBreakpoints: MaxBreakpoints, Lookback: DefaultLookback}
	if o != nil {
		opts = *o
		opts.hasCacheKey = o.CacheKey != ""
		opts.hasCachedContent = o.CachedContent != ""
	}
	a := &assembly{runEnd: p.seg.RunEnd, injEnd: p.seg.InjectionsEnd, goalEnd: p.seg.GoalEnd, injected: p.resp.Injected}
	a.msgs = make([]outMsg, len(p.resp.Messages))
	for i, m := range p.resp.Messages {
		a.msgs[i] = outMsg{kind: kCopy, role: m.Role, blocks: m.Content, chars: p.resp.MessageChars[i]}
	}
	return appendExport(dst, provider, &opts, a, a.layout())
}

// AppendPromptForm appends the prompt form (docs/SPEC.md §7.14) of a
// prompt's response r, whose first n messages it takes, and its segments:
// what a host sends for a Prompt wherever a request goes.
func AppendPromptForm(dst []byte, r *Response, n int, seg Segments) []byte {
	return AppendPromptFormOf(dst, seg, n, AppendMessages(nil, r.Messages[:n]), r.Injected)
}

// AppendPromptFormOf appends a prompt form whose n messages are already
// msgpack (AppendMessages): a host that keeps its prompt's messages packed
// from call to call packs only the new ones.
func AppendPromptFormOf(dst []byte, seg Segments, n int, messages []byte, injected []Injected) []byte {
	dst = seg.append(appendMapHeader(dst, 3))
	dst = append(appendArrayHeader(append(dst, keyMessages...), n), messages...)
	dst = appendArrayHeader(append(dst, key("injected")...), len(injected))
	for _, e := range injected {
		dst = appendStr(append(appendMapHeader(dst, 3), key("channel")...), e.Channel)
		dst = appendStr(append(dst, key("entry_id")...), e.EntryID)
		dst = appendUint(append(dst, keyMessageIndex...), uint64(e.MessageIndex))
	}
	return dst
}

// AppendMessageArray appends msgs as a msgpack array of {role, content}
// messages: an extension's (docs/SPEC.md §7.15).
func AppendMessageArray(dst []byte, msgs []Message) []byte {
	return AppendMessages(appendArrayHeader(dst, len(msgs)), msgs)
}

// AppendMessages appends msgs, each a msgpack map {role, content}, one
// after the other (no array header).
func AppendMessages(dst []byte, msgs []Message) []byte {
	for _, m := range msgs {
		dst = appendArrayHeader(append(appendStr(append(dst, msgHead...), m.Role), keyContent...), len(m.Content))
		for _, b := range m.Content {
			dst = appendStr(append(dst, blockHead+key(b.Type)+keyText...), b.Text)
		}
	}
	return dst
}
