package core

import (
	"math"
	"slices"
	"unsafe"

	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/core/msgp"
)

// The provider request body of an assembled prompt (docs/SPEC.md §7.13):
// the messages mapped, role by role and block by block, into Anthropic's
// Messages API or OpenAI's Chat Completions or Responses API, with the
// cache breakpoints (Anthropic) or the cache key (OpenAI) placed by the
// prompt's own segments. No character of any text is added, dropped or
// changed, and no message is added, merged or moved but Anthropic's
// leading system messages, which become its top-level system.

// The providers.
const (
	ProviderAnthropic       = "anthropic"
	ProviderOpenAIChat      = "openai-chat"
	ProviderOpenAIResponses = "openai-responses"
	ProviderOpenRouter      = "openrouter"
)

// The breakpoint policy's defaults: Anthropic's most breakpoints per
// request and the blocks its cache lookup looks back from one
// (RATIONALE.md, "Provider requests").
const (
	MaxBreakpoints  = 4
	DefaultLookback = 20
)

// ExportOptions are the export's options (docs/SPEC.md §7.13).
type ExportOptions struct {
	TTL              string // Anthropic's cache_control ttl ("5m", "1h"); "" leaves it out
	MaxBreakpoints   int    // at most MaxBreakpoints
	Lookback         int    // 0: no look-back breakpoint
	CacheKey         string // OpenAI's prompt_cache_key; "" for the run digest
	hasCacheKey      bool
	Explicit         bool   // OpenAI's explicit breakpoints (prompt_cache_breakpoint) at the policy's blocks
	CachedContent    string // gemini: the cache (cachedContents/…) holding the run and injections
	hasCachedContent bool
	Body             []byte // a msgpack map of the provider's other fields, passed through
}

// AppendExportBytes is the module's export call: a map {request, provider,
// options} (the request as a compare side: a map, or JSON text in a str, or
// msgpack in a bin; options nil or a map) answered with the provider's
// request body as a msgpack map, or {"error": …} (AppendMapError).
// wirejson.FromMsgpack writes the body as the JSON text a provider takes.
func AppendExportBytes(dst, request []byte, fromJSON func([]byte) ([]byte, *Error)) []byte {
	return appendArgsCall(dst, request, "the export", AppendMapError, func() ([]byte, *Error) {
		sc := getScratch()
		defer sc.release()
		req, a, provider, opts, err := readExportArgs(request, fromJSON, sc)
		if err != nil {
			err.Path = trimDot(err.Path) // a path of the arguments, as of a request (docs/SPEC.md §2.2)
			return nil, err
		}
		if a == nil { // not planned in place: planned on its own bytes
			own := getScratch()
			defer own.release()
			if a, err = planAny(req, own); err != nil {
				return nil, err.within2("request")
			}
		}
		return appendExport(dst, provider, &opts, a, a.layout())
	})
}

// within2 prefixes the path with an argument's name.
func (e *Error) within2(arg string) *Error {
	if e.Path == "" || e.Path[0] == '[' || e.Path[0] == '.' {
		e.Path = arg + e.Path
	} else {
		e.Path = arg + "." + e.Path
	}
	return e
}

// readExportArgs reads the export's arguments. A request map (or msgpack
// in a bin) is planned where it lies, in sc (a: its assembly); any other,
// or one whose planning fails, is returned as its bytes (req) to be
// planned on its own, so that its errors are the same either way.
func readExportArgs(b []byte, fromJSON func([]byte) ([]byte, *Error), sc *scratch) (req []byte, a *assembly, provider string, o ExportOptions, _ *Error) {
	o.MaxBreakpoints, o.Lookback = MaxBreakpoints, DefaultLookback
	if len(b) == 0 || msgp.NextType(b) != msgp.MapType {
		return nil, nil, "", o, wrongType(b, "an export request (a map with the keys request, provider and options)")
	}
	n, b, err := readMapHeader(b)
	if err != nil {
		return nil, nil, "", o, err
	}
	var seen keysSeen // at most a few keys are known: the set is never sized from a header not checked
	for range n {
		var key string
		at := b
		if key, b, err = readKey(b); err != nil {
			return nil, nil, "", o, err
		}
		if !seen.add(key, at) {
			return nil, nil, "", o, duplicateKey(key)
		}
		switch key {
		case "request":
			if len(b) > 0 && msgp.NextType(b) == msgp.ArrayType {
				return nil, nil, "", o, newError(CodeMalformedRequest, "request", "expected a request (a map), found a message list: the export needs the request, whose segments place the cache breakpoints")
			}
			if a, b = planInPlace(b, sc); a != nil {
				continue
			}
			if req, b, err = compareSideBytes(b, fromJSON); err != nil {
				return nil, nil, "", o, err.within2("request")
			}
		case "provider":
			if provider, b, err = readStr(b); err != nil {
				return nil, nil, "", o, err.within2("provider")
			}
			if err = knownProvider(provider); err != nil {
				return nil, nil, "", o, err
			}
		case "options":
			if b, err = o.read(b); err != nil {
				return nil, nil, "", o, err.within2("options")
			}
		default:
			return nil, nil, "", o, unknownField(key, "an export request", "request, provider, options")
		}
	}
	switch {
	case len(b) != 0:
		return nil, nil, "", o, newError(CodeMalformedRequest, "", "bytes follow the export request; send one map")
	case req == nil && a == nil:
		return nil, nil, "", o, missingField("request", "an export request")
	case provider == "":
		return nil, nil, "", o, missingField("provider", "an export request")
	}
	return req, a, provider, o, nil
}

// planInPlace plans the request at the start of b, a map or msgpack in a
// bin holding one map and nothing after it, in sc: its assembly and the
// bytes after it, or nil when it is none of these or its planning fails
// (sc is then left for the caller to release).
func planInPlace(b []byte, sc *scratch) (*assembly, []byte) {
	if len(b) == 0 {
		return nil, b
	}
	if msgp.NextType(b) == msgp.MapType {
		plan := planPrefix
		if isPromptForm(b) {
			plan = planPromptForm
		}
		a, rest, err := plan(b, sc)
		if err != nil {
			return nil, b
		}
		return a, rest
	}
	if msgp.NextType(b) != msgp.BinType {
		return nil, b
	}
	data, rest, e := msgp.ReadBytesZC(b)
	if e != nil || len(data) == 0 || msgp.NextType(data) != msgp.MapType {
		return nil, b
	}
	plan := planPrefix
	if isPromptForm(data) {
		plan = planPromptForm
	}
	if a, after, err := plan(data, sc); err == nil && len(after) == 0 {
		return a, rest
	}
	return nil, b
}

// read reads the options map (or nil).
func (o *ExportOptions) read(b []byte) ([]byte, *Error) {
	if len(b) > 0 && b[0] == 0xc0 {
		return b[1:], nil
	}
	n, b, err := readMapHeader(b)
	if err != nil {
		return b, err
	}
	var seen keysSeen // as readExportArgs's
	for range n {
		var key string
		at := b
		if key, b, err = readKey(b); err != nil {
			return b, err
		}
		if !seen.add(key, at) {
			return b, duplicateKey(key)
		}
		switch key {
		case "ttl":
			b, err = o.readTTL(b)
		case "max_breakpoints", "lookback":
			var v uint64
			if v, b, err = readUintOpt(b); err == nil {
				if key == "lookback" {
					o.Lookback = int(min(v, 1<<20))
				} else if v > MaxBreakpoints {
					err = newError(CodeMalformedRequest, "", "Anthropic takes at most 4 cache breakpoints per request; give 0 to 4")
				} else {
					o.MaxBreakpoints = int(v)
				}
			}
		case "prompt_cache_key", "cached_content":
			b, err = o.readStrOpt(key, b)
		case "explicit_breakpoints":
			o.Explicit, b, err = readBoolOpt(b)
		case "body":
			if len(b) == 0 || msgp.NextType(b) != msgp.MapType {
				err = wrongType(b, "a map of the provider's other fields (model, max_tokens, tools…)")
				break
			}
			rest, e := msgp.Skip(b)
			if e != nil { // cut short, or 0xc1 inside: where, as the fields' own check says it (bodyFields)
				if _, err = checkJSONValue(b, -1, false); err == nil {
					err = endsEarly()
				}
				return b, err.within2("body")
			}
			o.Body, b = b[:len(b)-len(rest)], rest
		default:
			return b, unknownField(key, "the export's options", "ttl, max_breakpoints, lookback, prompt_cache_key, explicit_breakpoints, cached_content, body")
		}
		if err != nil {
			return b, err.within(fieldSeg(key))
		}
	}
	return b, nil
}

// readTTL reads the ttl option: nil (the provider's default), "5m" or "1h".
func (o *ExportOptions) readTTL(b []byte) ([]byte, *Error) {
	if len(b) > 0 && b[0] == 0xc0 {
		return b[1:], nil
	}
	ttl, rest, err := readStr(b)
	if err == nil && ttl != "5m" && ttl != "1h" {
		err = newError(CodeMalformedRequest, "", "Anthropic's cache TTL is \"5m\" or \"1h\", not "+quote(ttl))
	}
	if err != nil {
		return b, err
	}
	o.TTL = ttl
	return rest, nil
}

// readStrOpt reads the str option key (prompt_cache_key, cached_content).
func (o *ExportOptions) readStrOpt(key string, b []byte) ([]byte, *Error) {
	s, rest, err := readStr(b)
	if err != nil {
		return b, err
	}
	if key == "cached_content" {
		o.CachedContent, o.hasCachedContent = s, true
	} else {
		o.CacheKey, o.hasCacheKey = s, true
	}
	return rest, nil
}

func readBoolOpt(b []byte) (bool, []byte, *Error) {
	if len(b) == 0 || b[0]&0xfe != 0xc2 {
		return false, b, wrongType(b, "true or false")
	}
	return b[0] == 0xc3, b[1:], nil
}

func readUintOpt(b []byte) (uint64, []byte, *Error) {
	if len(b) > 0 && (msgp.NextType(b) == msgp.IntType || msgp.NextType(b) == msgp.UintType) {
		if v, rest, e := msgp.ReadInt64Bytes(b); e == nil && v >= 0 {
			return uint64(v), rest, nil
		}
	}
	return 0, b, wrongType(b, "a count (an int ≥ 0)")
}

// breakpoints are the blocks (numbered in the prompt) that get
// Anthropic's cache_control: the last block of the prompt, of the run, of
// the goal and of the injections, in that priority, at most
// o.MaxBreakpoints; then, while one is left, one every o.Lookback blocks
// back from the last, so that the cache the previous call wrote stays
// within the provider's look-back of one of them.
func breakpoints(v *View, o *ExportOptions, buf *[MaxBreakpoints]int) []int {
	bs := v.BlockStart // the last block of message m: bs[m+1]-1, -1 when no block ends there
	cands := [4]int{bs[len(v.Role)] - 1, bs[v.RunEnd] - 1, -1, -1}
	if v.GoalEnd > v.InjectionsEnd {
		cands[2] = bs[v.GoalEnd] - 1
	}
	if v.InjectionsEnd > v.RunEnd {
		cands[3] = bs[v.InjectionsEnd] - 1
	}
	bp := buf[:0]
	for _, c := range cands {
		if c >= 0 && len(bp) < o.MaxBreakpoints && !slices.Contains(bp, c) {
			bp = append(bp, c)
		}
	}
	sortSmall(bp)
	for o.Lookback > 0 && len(bp) > 0 && len(bp) < o.MaxBreakpoints {
		// the latest gap wider than the look-back, in the history, gets a
		// breakpoint o.Lookback blocks below its upper end
		at := -1
		for k := len(bp) - 1; k >= 0; k-- {
			lo := -1
			if k > 0 {
				lo = bp[k-1]
			}
			if bp[k]-lo > o.Lookback && bp[k]-o.Lookback > lo && bp[k]-o.Lookback >= v.BlockStart[v.GoalEnd] {
				at = bp[k] - o.Lookback
				break
			}
		}
		if at < 0 {
			break
		}
		bp = append(bp, at)
		sortSmall(bp)
	}
	return bp
}

// sortSmall sorts a few ints (an insertion sort: slices.Sort would link
// a general sort into the module for four numbers).
func sortSmall(s []int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// knownProvider refuses a provider the export does not write.
func knownProvider(provider string) *Error {
	if shapeOf(provider) != nil {
		return nil
	}
	return newError(CodeMalformedRequest, "provider", "unknown provider "+quote(provider)+"; use "+ProviderList())
}

// ProviderList is Providers as prose, "anthropic, openai-chat, … or
// gemini-cache": what the refusal of an unknown provider and the CLI's
// usage name.
func ProviderList() string {
	list := ""
	for i, p := range Providers {
		switch {
		case i == len(Providers)-1:
			list += " or "
		case i > 0:
			list += ", "
		}
		list += p
	}
	return list
}

// appendExport writes the provider's request body, a msgpack map.
func appendExport(dst []byte, provider string, o *ExportOptions, a *assembly, v *View) ([]byte, *Error) {
	s := shapeOf(provider)
	if o.Explicit && !s.openAI {
		return nil, newError(CodeMalformedRequest, "options.explicit_breakpoints", "explicit_breakpoints is an option of openai-chat and openai-responses (OpenAI's prompt_cache_breakpoint); "+provider+" places its own cache marks, or none: leave the option out")
	}
	if o.hasCachedContent && provider != ProviderGemini {
		return nil, newError(CodeMalformedRequest, "options.cached_content", "cached_content is an option of gemini (generateContent's cachedContent, the cache gemini-cache's body creates); leave it out for "+provider)
	}
	return appendShaped(dst, s, provider, o, a, v)
}

// ttlIndex is the index of the option ttl in a shape's marks: none, 5m,
// 1h.
func ttlIndex(ttl string) int {
	switch ttl {
	case "5m":
		return 1
	case "1h":
		return 2
	}
	return 0
}

// offAssistant moves each breakpoint on an assistant message's block to
// the last block of the nearest message before it that is no assistant's
// (OpenAI takes prompt_cache_breakpoint on no assistant output): one
// such block holds at most one, and a breakpoint with none before it is
// not placed (docs/SPEC.md §7.13).
func (w *exportWriter) offAssistant() {
	v, out := w.v, 0
	for _, b := range w.bp[:w.nbp] {
		lo, hi := 0, len(v.Role) // the message holding block b: BlockStart[m] <= b < BlockStart[m+1]
		for lo < hi {
			if mid := int(uint(lo+hi) >> 1); v.BlockStart[mid+1] <= b {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		m := lo
		for m >= 0 && (v.Role[m] == roleAssistant || v.BlockStart[m+1] == v.BlockStart[m]) {
			m--
		}
		if m < 0 {
			continue
		}
		if b = v.BlockStart[m+1] - 1; out == 0 || w.bp[out-1] != b {
			w.bp[out] = b
			out++
		}
	}
	w.nbp = out
}

// appendBodyHead writes the body map's header, of keys keys and the
// options' body fields, and those fields.
func appendBodyHead(dst []byte, s *shape, o *ExportOptions, keys int) ([]byte, *Error) {
	var body []byte
	if o.Body != nil {
		var n int
		var err *Error
		if n, body, err = bodyFields(o.Body, s, o); err != nil {
			return nil, err.within2("options.body")
		}
		keys += n
	}
	return append(appendAnyMapHeader(dst, keys), body...), nil
}

// keyPromptCacheKey is OpenAI's prompt_cache_key, encoded.
const keyPromptCacheKey = "\xb0prompt_cache_key"

// exportWriter writes the messages of one export, from the assembly's
// plan: no response is encoded, each text is written once.
type exportWriter struct {
	o    *ExportOptions
	a    *assembly
	v    *View               // the layout (layout): segment ends, roles, block starts
	sys  int                 // the leading system messages (Anthropic's system)
	mark string              // what follows a marked block's text (a shape's)
	bp   [MaxBreakpoints]int // the blocks that get cache_control, ascending: bp[:nbp]
	nbp  int
}

// marked is 1 when block j of message m gets cache_control, else 0.
func (w *exportWriter) marked(m, j int) int {
	return w.markedBlock(w.v.BlockStart[m] + j)
}

// markedBlock is 1 when block blk (numbered in the prompt) gets
// cache_control, else 0.
func (w *exportWriter) markedBlock(blk int) int {
	for _, b := range w.bp[:w.nbp] {
		if b == blk {
			return 1
		}
	}
	return 0
}

// text writes the text of block j of message m.
func (w *exportWriter) text(dst []byte, m, j int) []byte {
	switch msg := &w.a.msgs[m]; msg.kind {
	case kCopy:
		return appendStr(dst, msg.blocks[j].Text)
	case kText:
		return appendStr(dst, msg.text)
	}
	msg := &w.a.msgs[m]
	return w.a.tmpl.AppendRender(appendStrHeader(dst, msg.nbytes), msg.text)
}

// leadingSystem is the number of leading system messages, which become
// the provider's (who's) top-level system; a system message after them is
// an error. layout found both (v is a's layout).
func leadingSystem(a *assembly, v *View, who string) (int, *Error) {
	if m := a.lay.lateSys; m >= 0 {
		return 0, newError(CodeMalformedRequest, requestPathOf(v, m), who+" takes system text only before the first user or assistant message (its top-level system), and this system message follows one; make it a user message, or move it to the start of run_messages")
	}
	return a.lay.sys, nil
}

// requestPathOf is the request path of message m: a run or goal message's.
func requestPathOf(v *View, m int) string {
	switch {
	case m < v.RunEnd:
		return "request.run_messages" + indexSeg(m)
	case m >= v.InjectionsEnd && m < v.GoalEnd:
		return "request.goal_messages" + indexSeg(m-v.InjectionsEnd)
	}
	return "request"
}

// bodyFields reads the body map (msgpack): its field count and the bytes of
// its fields, each a value JSON can hold (checkJSONValue), refusing a
// field the export writes itself.
func bodyFields(b []byte, s *shape, o *ExportOptions) (int, []byte, *Error) {
	n, fields, err := readMapHeader(b)
	if err != nil {
		return 0, nil, err
	}
	rest := fields
	seen := keysSeen{keys: n}
	for range n {
		var key string
		at := rest
		if key, rest, err = readKey(rest); err != nil {
			return 0, nil, err
		}
		if !seen.add(key, at) {
			return 0, nil, duplicateKey(key)
		}
		// the shape's own keys, and the options' (given only where they apply)
		if slices.Contains(s.own, key) || key == "prompt_cache_options" && o.Explicit || key == "cachedContent" && o.hasCachedContent {
			what := "the export writes " + quote(key) + " itself from the prompt; leave it out of the body"
			if key == "error" {
				what = "a body field named \"error\" would make the answer read as an error; no provider takes one, leave it out"
			}
			return 0, nil, newError(CodeMalformedRequest, fieldSeg(key)[1:], what)
		}
		if rest, err = checkJSONValue(rest, 0, true); err != nil {
			return 0, nil, err.within(fieldSeg(key))
		}
	}
	return int(n), fields[:len(fields)-len(rest)], nil
}

// checkJSONValue checks the msgpack value at the start of b, a provider's
// field passed through as it is (nothing of it is rendered), is one JSON
// can hold, and returns the bytes after it. sized: the value was skipped
// whole before, so its maps' headers are true (a duplicate-key set is
// sized from them; else it grows as keys come, so that headers that lie
// cost nothing).
func checkJSONValue(b []byte, depth int, sized bool) ([]byte, *Error) {
	if depth > abi.MaxValueDepth {
		return b, newError(CodeMalformedRequest, "", abi.MsgValueTooDeep)
	}
	switch msgp.NextType(b) {
	case msgp.MapType:
		n, rest, err := readMapHeader(b)
		seen := keysSeen{}
		if sized {
			seen.keys = n
		}
		for i := uint32(0); err == nil && i < uint32(n); i++ {
			var key string
			at := rest
			if key, rest, err = readKey(rest); err == nil {
				if !seen.add(key, at) {
					return rest, duplicateKey(key)
				}
				if rest, err = checkJSONValue(rest, depth+1, sized); err != nil {
					err = err.within(fieldSeg(key))
				}
			}
		}
		return rest, err
	case msgp.ArrayType:
		n, rest, err := readArrayHeader(b)
		for i := uint32(0); err == nil && i < uint32(n); i++ {
			if rest, err = checkJSONValue(rest, depth+1, sized); err != nil {
				err = err.within(indexSeg(int(i)))
			}
		}
		return rest, err
	case msgp.StrType:
		_, rest, err := readStr(b)
		return rest, err
	case msgp.IntType, msgp.UintType, msgp.BoolType, msgp.NilType:
		rest, e := msgp.Skip(b)
		if e != nil {
			return b, endsEarly()
		}
		return rest, nil
	case msgp.Float32Type, msgp.Float64Type:
		f, rest, e := msgp.ReadFloat64Bytes(b)
		if e != nil {
			return b, endsEarly()
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, newError(CodeMalformedRequest, "", "JSON has no NaN or infinity; give a finite number")
		}
		return rest, nil
	}
	return b, wrongType(b, "a JSON value ("+w().JSONValue+")")
}

// layout is the part of a's view the export reads: the segment ends, the
// role of each message (an index in shapeRoles: a shape's heads and blocks
// are by it) and the block starts, in arrays a keeps from call to call;
// and, in a.lay, the leading system messages (leadingSystem).
func (a *assembly) layout() *View {
	if a.lay == nil {
		a.lay = &layoutBuf{}
	}
	l, msgs := a.lay, a.msgs
	role, start := grown(l.role, len(msgs))[:len(msgs)], grown(l.blockStart, len(msgs)+1)[:len(msgs)+1]
	sys, late, b := 0, -1, 0 // in locals, and the slices cut to length: no bounds checks in the loop
	for i := range msgs {
		r := roleIndex(msgs[i].role)
		if r == roleSystem {
			if sys == i {
				sys++
			} else if late < 0 {
				late = i
			}
		}
		role[i], start[i] = r, b
		b += msgs[i].blockCount()
	}
	start[len(msgs)] = b
	l.role, l.blockStart, l.sys, l.lateSys = role, start, sys, late
	l.view = View{RunEnd: a.runEnd, InjectionsEnd: a.injEnd, GoalEnd: a.goalEnd, Roles: shapeRoles, Role: l.role,
		BlockStart: l.blockStart}
	return &l.view
}

// layoutBuf holds layout's view and arrays.
type layoutBuf struct {
	view             View
	role, blockStart []int
	// sys is the number of leading system messages, lateSys the first
	// system message after them, or -1 (leadingSystem).
	sys, lateSys int
}

// runDigest is the run prefix digest of a's response (docs/SPEC.md §6),
// from the canonical encoding of the run's messages.
func (a *assembly) runDigest() string {
	// The run's encoding alone first: the last prefix hashed (an
	// assemble's, an export's) mostly begins with this run. A message of
	// one text block (all blocks are) is encoded as the kText message of
	// its text, the same bytes in fewer appends (but a system message's:
	// textHead has no system head). Should they differ, the run would not
	// be found, and is hashed below.
	enc := a.enc[:0]
	for i := range a.msgs[:a.runEnd] {
		m := &a.msgs[i]
		if m.kind == kCopy && len(m.blocks) == 1 && roleIndex(m.role) != roleSystem {
			one := outMsg{kind: kText, role: m.role, text: m.blocks[0].Text}
			m = &one
		}
		enc = a.appendMessage(enc, m)
	}
	if c := lastDigests.Load(); c != nil && c.count[0] == a.runEnd && c.byteEnd[0] == len(enc) &&
		equalText(c.prefix[:len(enc)], unsafe.String(unsafe.SliceData(enc), len(enc))) {
		a.enc = enc
		return c.digests[0]
	}
	enc, ends := a.appendMessages(enc[:0], a.msgs[:a.goalEnd])
	d := prefixDigests(enc, ends, a.segments())
	if a.enc = enc; cap(enc) > 1<<20 {
		a.enc = nil
	}
	return d[0]
}
