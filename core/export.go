package core

import (
	"math"
	"slices"
	"strconv"
	"unsafe"

	"github.com/polyloop/assembly/core/jsonstr"
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
	TTL            string // Anthropic's cache_control ttl ("5m", "1h"); "" leaves it out
	MaxBreakpoints int    // at most MaxBreakpoints
	Lookback       int    // 0: no look-back breakpoint
	CacheKey       string // OpenAI's prompt_cache_key; "" for the run digest
	hasCacheKey    bool
	Body           []byte // a msgpack map of the provider's other fields, passed through
}

// AppendExportBytes is the module's export call: a map {request, provider,
// options} (the request as a compare side: a map, or JSON text in a str, or
// msgpack in a bin; options nil or a map) answered with the provider's
// request body as JSON text, or {"error": …}.
func AppendExportBytes(dst, request []byte, fromJSON func([]byte) ([]byte, *Error)) []byte {
	return appendJSONCall(dst, request, "the export", func() ([]byte, *Error) {
		req, provider, opts, err := readExportArgs(request, fromJSON)
		if err != nil {
			return nil, err
		}
		sc := getScratch()
		defer sc.release()
		_, a, _, err := planRequest(req, sc)
		if err != nil {
			return nil, err.within2("request")
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

func readExportArgs(b []byte, fromJSON func([]byte) ([]byte, *Error)) (req []byte, provider string, o ExportOptions, _ *Error) {
	o.MaxBreakpoints, o.Lookback = MaxBreakpoints, DefaultLookback
	if len(b) == 0 || msgp.NextType(b) != msgp.MapType {
		return nil, "", o, wrongType(b, "an export request (a map with the keys request, provider and options)")
	}
	n, b, err := readMapHeader(b)
	if err != nil {
		return nil, "", o, err
	}
	for range n {
		var key string
		if key, b, err = readKey(b); err != nil {
			return nil, "", o, err
		}
		switch key {
		case "request":
			if len(b) > 0 && msgp.NextType(b) == msgp.ArrayType {
				return nil, "", o, newError(CodeMalformedRequest, "request", "expected a request (a map), found a message list: the export needs the request, whose segments place the cache breakpoints")
			}
			if req, b, err = compareSideBytes(b, fromJSON); err != nil {
				return nil, "", o, err.within2("request")
			}
		case "provider":
			if provider, b, err = readStr(b); err != nil {
				return nil, "", o, err.within2("provider")
			}
			switch provider {
			case ProviderAnthropic, ProviderOpenAIChat, ProviderOpenAIResponses:
			default:
				return nil, "", o, newError(CodeMalformedRequest, "provider", "unknown provider "+quote(provider)+"; use anthropic, openai-chat or openai-responses")
			}
		case "options":
			if b, err = o.read(b); err != nil {
				return nil, "", o, err.within2("options")
			}
		default:
			return nil, "", o, unknownField(key, "an export request", "request, provider, options")
		}
	}
	switch {
	case len(b) != 0:
		return nil, "", o, newError(CodeMalformedRequest, "", "bytes follow the export request; send one map")
	case req == nil:
		return nil, "", o, missingField("request", "an export request")
	case provider == "":
		return nil, "", o, missingField("provider", "an export request")
	}
	return req, provider, o, nil
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
	for range n {
		var key string
		if key, b, err = readKey(b); err != nil {
			return b, err
		}
		switch key {
		case "ttl":
			if len(b) > 0 && b[0] == 0xc0 {
				b = b[1:]
				continue
			}
			o.TTL, b, err = readStr(b)
			if err == nil && o.TTL != "5m" && o.TTL != "1h" {
				err = newError(CodeMalformedRequest, "", "Anthropic's cache TTL is \"5m\" or \"1h\", not "+quote(o.TTL))
			}
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
		case "prompt_cache_key":
			o.CacheKey, b, err = readStr(b)
			o.hasCacheKey = err == nil
		case "body":
			if len(b) == 0 || msgp.NextType(b) != msgp.MapType {
				err = wrongType(b, "a map of the provider's other fields (model, max_tokens, tools…)")
				break
			}
			rest, e := msgp.Skip(b)
			if e != nil {
				return b, endsEarly().within2("body")
			}
			o.Body, b = b[:len(b)-len(rest)], rest
		default:
			return b, unknownField(key, "the export's options", "ttl, max_breakpoints, lookback, prompt_cache_key, body")
		}
		if err != nil {
			return b, err.within(fieldSeg(key))
		}
	}
	return b, nil
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
func breakpoints(v *View, o *ExportOptions) []int {
	n := len(v.Role)
	lastBlock := func(m int) int { return v.BlockStart[m+1] - 1 } // -1 when no block ends there
	var cands []int
	if n > 0 {
		cands = append(cands, lastBlock(n-1))
	}
	if v.RunEnd > 0 {
		cands = append(cands, lastBlock(v.RunEnd-1))
	}
	if v.GoalEnd > v.InjectionsEnd {
		cands = append(cands, lastBlock(v.GoalEnd-1))
	}
	if v.InjectionsEnd > v.RunEnd {
		cands = append(cands, lastBlock(v.InjectionsEnd-1))
	}
	var bp []int
	for _, c := range cands {
		if c >= 0 && len(bp) < o.MaxBreakpoints && !slices.Contains(bp, c) {
			bp = append(bp, c)
		}
	}
	slices.Sort(bp)
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
		slices.Sort(bp)
	}
	return bp
}

// appendExport writes the provider's request body.
func appendExport(dst []byte, provider string, o *ExportOptions, a *assembly, v *View) ([]byte, *Error) {
	w := &exportWriter{provider: provider, o: o, a: a, v: v}
	if provider == ProviderAnthropic {
		var err *Error
		if w.sys, err = leadingSystem(a, v); err != nil {
			return nil, err
		}
		w.bp = breakpoints(v, o)
	}
	start := len(dst)
	dst = append(dst, '{')
	if o.Body != nil {
		var err *Error
		if dst, err = appendBodyFields(dst, o.Body, provider); err != nil {
			return nil, err.within2("options.body")
		}
	}
	sep := func(dst []byte) []byte {
		if len(dst) > start+1 {
			return append(dst, ',')
		}
		return dst
	}
	if w.sys > 0 {
		dst = append(sep(dst), `"system":[`...)
		for m := range w.sys {
			for j := range v.BlockStart[m+1] - v.BlockStart[m] {
				dst = w.block(comma(dst, v.BlockStart[m]+j), m, j, "text")
			}
		}
		dst = append(dst, ']')
	}
	list := `"messages":[`
	if provider == ProviderOpenAIResponses {
		list = `"input":[`
	}
	dst = append(w.messages(append(sep(dst), list...)), ']')
	if provider != ProviderAnthropic {
		key := a.runDigest()
		if o.hasCacheKey {
			key = o.CacheKey
		}
		dst = jsonstr.Append(append(dst, `,"prompt_cache_key":`...), key)
	}
	return append(dst, '}'), nil
}

// exportWriter writes the messages of one export, from the assembly's
// plan: no response is encoded, each text is written as JSON once.
type exportWriter struct {
	provider string
	o        *ExportOptions
	a        *assembly
	v        *View  // the layout (layout): segment ends, roles, block starts
	sys      int    // the leading system messages (Anthropic's system)
	bp       []int  // the blocks that get cache_control, ascending
	render   []byte // the rendering of the observation being written
}

// messages writes every message after the leading system ones.
func (w *exportWriter) messages(dst []byte) []byte {
	v := w.v
	for m := w.sys; m < len(v.Role); m++ {
		role := w.a.msgs[m].role
		dst = jsonstr.Append(append(comma(dst, m-w.sys), `{"role":`...), role)
		dst = append(dst, `,"content":[`...)
		typ := "text"
		if w.provider == ProviderOpenAIResponses {
			typ = "input_text"
			if role == RoleAssistant {
				typ = "output_text"
			}
		}
		for j := range v.BlockStart[m+1] - v.BlockStart[m] {
			dst = w.block(comma(dst, j), m, j, typ)
		}
		dst = append(dst, "]}"...)
	}
	return dst
}

// block writes block j of message m (block blk of the prompt) as a block of
// typ.
func (w *exportWriter) block(dst []byte, m, j int, typ string) []byte {
	blk := w.v.BlockStart[m] + j
	dst = jsonstr.Append(append(dst, `{"type":`...), typ)
	dst = jsonstr.Append(append(dst, `,"text":`...), w.text(&w.a.msgs[m], j))
	if _, ok := slices.BinarySearch(w.bp, blk); ok {
		dst = append(dst, `,"cache_control":{"type":"ephemeral"`...)
		if w.o.TTL != "" {
			dst = jsonstr.Append(append(dst, `,"ttl":`...), w.o.TTL)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// text is block j of m's text: a rendering is valid until the next one.
func (w *exportWriter) text(m *outMsg, j int) string {
	switch m.kind {
	case kCopy:
		return m.blocks[j].Text
	case kText:
		return m.text
	}
	w.render = w.a.tmpl.AppendRender(w.render[:0], m.text)
	return unsafe.String(unsafe.SliceData(w.render), len(w.render))
}

// leadingSystem is the number of leading system messages, which become
// Anthropic's system; a system message after them is an error.
func leadingSystem(a *assembly, v *View) (int, *Error) {
	n, sys := len(a.msgs), 0
	for sys < n && a.msgs[sys].role == RoleSystem {
		sys++
	}
	for m := sys; m < n; m++ {
		if a.msgs[m].role == RoleSystem {
			return 0, newError(CodeMalformedRequest, requestPathOf(v, m), "Anthropic takes system text only before the first user or assistant message (its top-level system), and this system message follows one; make it a user message, or move it to the start of run_messages")
		}
	}
	return sys, nil
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

// appendBodyFields writes the body map's fields (a msgpack map) as JSON
// members, refusing a field the export writes itself.
func appendBodyFields(dst, b []byte, provider string) ([]byte, *Error) {
	n, b, err := readMapHeader(b)
	if err != nil {
		return nil, err
	}
	own := []string{"messages", "system"}
	if provider != ProviderAnthropic {
		own = []string{"messages", "input", "prompt_cache_key"}
	}
	for i := range n {
		var key string
		if key, b, err = readKey(b); err != nil {
			return nil, err
		}
		if slices.Contains(own, key) {
			return nil, newError(CodeMalformedRequest, fieldSeg(key)[1:], "the export writes "+quote(key)+" itself from the prompt; leave it out of the body")
		}
		dst = append(jsonstr.Append(comma(dst, int(i)), key), ':')
		if dst, b, err = appendJSONValue(dst, b, 0); err != nil {
			return nil, err.within(fieldSeg(key))
		}
	}
	return dst, nil
}

// appendJSONValue writes the msgpack value at the start of b as JSON: a
// provider's field passed through as it is (nothing of it is rendered).
func appendJSONValue(dst, b []byte, depth int) ([]byte, []byte, *Error) {
	if depth > 64 {
		return nil, b, newError(CodeMalformedRequest, "", "this value nests deeper than 64 levels")
	}
	switch msgp.NextType(b) {
	case msgp.MapType:
		n, rest, err := readMapHeader(b)
		if err != nil {
			return nil, b, err
		}
		dst = append(dst, '{')
		for i := range n {
			var key string
			if key, rest, err = readKey(rest); err != nil {
				return nil, b, err
			}
			dst = append(jsonstr.Append(comma(dst, int(i)), key), ':')
			if dst, rest, err = appendJSONValue(dst, rest, depth+1); err != nil {
				return nil, b, err.within(fieldSeg(key))
			}
		}
		return append(dst, '}'), rest, nil
	case msgp.ArrayType:
		n, rest, err := readArrayHeader(b)
		if err != nil {
			return nil, b, err
		}
		dst = append(dst, '[')
		for i := range n {
			if dst, rest, err = appendJSONValue(comma(dst, int(i)), rest, depth+1); err != nil {
				return nil, b, err.within(indexSeg(int(i)))
			}
		}
		return append(dst, ']'), rest, nil
	}
	return appendJSONScalar(dst, b)
}

// appendJSONScalar writes the scalar msgpack value at the start of b as
// JSON.
func appendJSONScalar(dst, b []byte) ([]byte, []byte, *Error) {
	switch msgp.NextType(b) {
	case msgp.StrType:
		s, rest, err := readStr(b)
		if err != nil {
			return nil, b, err
		}
		return jsonstr.Append(dst, s), rest, nil
	case msgp.IntType:
		v, rest, e := msgp.ReadInt64Bytes(b)
		if e != nil {
			return nil, b, endsEarly()
		}
		return strconv.AppendInt(dst, v, 10), rest, nil
	case msgp.UintType:
		v, rest, e := msgp.ReadUint64Bytes(b)
		if e != nil {
			return nil, b, endsEarly()
		}
		return strconv.AppendUint(dst, v, 10), rest, nil
	case msgp.Float32Type, msgp.Float64Type:
		f, rest, e := msgp.ReadFloat64Bytes(b)
		if e != nil {
			return nil, b, endsEarly()
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, b, newError(CodeMalformedRequest, "", "JSON has no NaN or infinity; give a finite number")
		}
		return strconv.AppendFloat(dst, f, 'g', -1, 64), rest, nil
	case msgp.BoolType:
		v, rest, e := msgp.ReadBoolBytes(b)
		if e != nil {
			return nil, b, endsEarly()
		}
		return strconv.AppendBool(dst, v), rest, nil
	case msgp.NilType:
		return append(dst, "null"...), b[1:], nil
	}
	return nil, b, wrongType(b, "a JSON value ("+w().JSONValue+")")
}

// layout is the part of a's view the export reads: the segment ends, a
// role index per message (its length is the message count) and the block
// starts.
func (a *assembly) layout() *View {
	v := &View{RunEnd: a.runEnd, InjectionsEnd: a.injEnd, GoalEnd: a.goalEnd,
		Role: make([]int, len(a.msgs)), BlockStart: make([]int, len(a.msgs)+1)}
	for i := range a.msgs {
		v.BlockStart[i+1] = v.BlockStart[i] + a.msgs[i].blockCount()
	}
	return v
}

// runDigest is the run prefix digest of a's response (docs/SPEC.md §6),
// from the canonical encoding of the run's messages.
func (a *assembly) runDigest() string {
	enc, ends := a.appendMessages(a.enc[:0], a.msgs[:a.goalEnd])
	d := prefixDigests(enc, ends, a.segments())
	if a.enc = enc; cap(enc) > 1<<20 {
		a.enc = nil
	}
	return d[0]
}
