package core

import (
	"slices"
	"strconv"
	"unsafe"

	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/core/jsonstr"
	"github.com/polyloop/assembly/core/msgp"
)

// The cache report of a run (docs/SPEC.md §7.12): for each call, whether
// its prompt extends the previous call's (what a provider's prefix cache
// can serve), the first break and its cause in the prompt's own terms, the
// cacheable prefix; the stable prefixes shared across calls; and, given
// the provider's recorded usage, whether each call was served as the
// prompts predict. Every request is assembled once.

// The causes of a break.
const (
	CauseRun          = "run_changed"        // the run segment changed
	CauseInjections   = "injections_changed" // an injection was added, removed or edited
	CauseGoal         = "goal_changed"       // the goal segment changed
	CauseHistory      = "history_rewritten"  // a history message was rewritten (condensed, edited)
	CauseStepsRemoved = "steps_removed"      // the history ends before the previous call's did
)

// The usage classes (docs/SPEC.md §7.12).
const (
	UsageFirst        = "first"         // the first call: nothing cached yet
	UsageHit          = "hit"           // the provider read a cached prefix, as the prompts allow
	UsagePrefixBreak  = "prefix_break"  // nothing read, and our prefix changed: the break says where
	UsageProviderMiss = "provider_miss" // nothing read (nor written, where the usage says), though the prefix was kept
	UsageWriteOnly    = "write_only"    // nothing read but tokens written, though the prefix was kept: written again
	UsageNone         = "no_usage"      // no usage recorded for the call
	UsageInvalid      = "invalid_usage" // the recorded usage cannot be read: its error says why
	UsageUnknown      = "unknown_usage" // the usage has none of the fields the report reads: never read as a miss
)

// CacheCall is one call of a cache report.
type CacheCall struct {
	Err      *Error // the request's error; the call is then left out of the run
	Previous int    // the call it is compared with, -1 for none
	Extends  bool
	Break    *CacheBreak
	// PromptChars and CacheablePrefixChars count code points, as
	// prompt_chars does.
	PromptChars, CacheablePrefixChars int64
	Digests                           PrefixDigests
	Usage                             *CacheUsage
	stable                            int64 // code points of the run, injection and goal segments
}

// CacheBreak is where a call's prompt leaves the previous call's.
type CacheBreak struct {
	Segment string // run, injections, goal or history
	Message int
	Char    int
	Step    int // the step of a history message; -1 otherwise
	Cause   string
	// Excerpts: the common text before, each prompt's text from the break.
	Before, Previous, This string
	HasPrevious, HasThis   bool
}

// CacheUsage is a call's recorded provider usage and its class.
type CacheUsage struct {
	CachedTokens  int64
	WrittenTokens *int64 // nil where the usage records no writes
	Class         string
	// MissReason is the provider's own reason for a miss (Anthropic's
	// diagnostics.cache_miss_reason.type), "" for none;
	// MissReasonDisagrees: it names a change the prompts do not hold.
	MissReason          string
	MissReasonDisagrees bool
	Note                string // an unknown_usage's: the shapes the report reads
	Err                 *Error // an invalid_usage's error, its path from the usage argument
}

// CacheGroup is the calls that share one stable prefix: run, injection and
// goal digests.
type CacheGroup struct {
	Digests     PrefixDigests
	Calls       int
	PrefixChars int64 // code points of that prefix
}

// CacheReport is the answer of CacheReportOf.
type CacheReport struct {
	Calls  []CacheCall
	Groups []CacheGroup
}

// CacheReportOf reports on requests, the calls of a run in order (each a
// wire request); usage, when not nil, holds each call's recorded usage
// (nil where none), as readUsage reads it.
func CacheReportOf(requests [][]byte, usage []*int64) *CacheReport {
	var read []*usageRead
	if usage != nil {
		read = make([]*usageRead, len(usage))
		for i, n := range usage {
			if n != nil {
				read[i] = &usageRead{known: true, cached: *n}
			}
		}
	}
	return cacheReportOf(requests, read, nil)
}

// cacheReportOf is CacheReportOf with the errors of usages that could not
// be read (usageErrs[i], when not nil, classes call i invalid_usage).
func cacheReportOf(requests [][]byte, usage []*usageRead, usageErrs []*Error) *CacheReport {
	r := &CacheReport{Calls: make([]CacheCall, len(requests))}
	st := newRunState()
	// Two sides, the previous call's and this one's, alternate: each keeps
	// its slices and its rendering buffer from call to call.
	var views [2]View
	sides := [2]cmpSide{{view: &views[0]}, {view: &views[1]}}
	var prev *cmpSide
	for i, req := range requests {
		c := &r.Calls[i]
		side := &sides[0]
		if prev == side {
			side = &sides[1]
		}
		if err := planSide(side, req); err != nil {
			st.fail(c, err)
			continue
		}
		var u usageOf
		if usage != nil {
			u = usageOf{given: true, read: usage[i]}
			if usageErrs != nil {
				u.err = usageErrs[i]
			}
		}
		st.record(c, side, prev, u)
		prev = side
	}
	r.Groups = st.groups
	return r
}

// planSide sets s to a request's prompt as the report compares it, read
// from its assembly's plan (no response is encoded): its messages' roles,
// texts and code points, its segment ends and prefix digests (in s.view).
// The texts alias the request's bytes, and its renderings are written
// over s.resp, so they hold until s is planned again; s's slices are
// reused.
func planSide(s *cmpSide, req []byte) *Error {
	if err := checkRequestSize(len(req)); err != nil {
		return err
	}
	sc := getScratch()
	defer sc.release()
	a, err := planAny(req, sc)
	if err != nil {
		return err
	}
	n := len(a.msgs)
	s.roles, s.texts, s.chars = grown(s.roles, n), grown(s.texts, n), grown(s.chars, n)
	nb, rendered := 0, 0
	for i := range a.msgs {
		nb += a.msgs[i].blockCount()
		if a.msgs[i].kind == kObs {
			rendered += a.msgs[i].nbytes
		}
	}
	all := grown(s.all, nb)[:0]
	render := slices.Grow(s.resp[:0], rendered) // never grown past: the strings below stay valid
	for i := range a.msgs {
		m := &a.msgs[i]
		s.roles[i], s.chars[i] = m.role, m.chars
		start := len(all)
		switch m.kind {
		case kCopy:
			for _, b := range m.blocks {
				all = append(all, b.Text)
			}
		case kText:
			all = append(all, m.text)
		default:
			at := len(render)
			render = a.tmpl.AppendRender(render, m.text)
			all = append(all, unsafe.String(unsafe.SliceData(render[at:]), len(render)-at))
		}
		s.texts[i] = all[start:len(all):len(all)]
	}
	enc, ends := a.appendMessages(a.enc[:0], a.msgs[:a.goalEnd])
	d := prefixDigests(enc, ends, a.segments())
	a.enc = enc
	var prompt int64
	for _, c := range s.chars {
		prompt += c
	}
	*s.view = View{RunEnd: a.runEnd, InjectionsEnd: a.injEnd, GoalEnd: a.goalEnd, MessageChars: s.chars, PromptChars: prompt,
		PrefixDigests: PrefixDigests{Run: d[0], Injections: d[1], Goal: d[2]}}
	s.resp, s.all = render, all
	return nil
}

// grown is s with length n, its array reused when large enough.
func grown[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// compare sets what the call keeps of the previous call's prompt.
func (c *CacheCall) compare(prev, cur *cmpSide) {
	var d *Difference
	if !extends(prev, cur) {
		d = firstDifference(prev, cur)
	}
	if d == nil || d.Kind == DiffLength && !d.HasA { // the same prompt, or the previous one and more
		c.Extends = true
		for _, ch := range prev.chars {
			c.CacheablePrefixChars += ch
		}
		return
	}
	for _, ch := range cur.chars[:min(d.Message, len(cur.chars))] {
		c.CacheablePrefixChars += ch
	}
	c.CacheablePrefixChars += int64(d.Char)
	b := &CacheBreak{Message: d.Message, Char: d.Char, Step: -1, Before: d.Before, Previous: d.A, This: d.B, HasPrevious: d.HasA, HasThis: d.HasB}
	pd, cd := prev.view.PrefixDigests, cur.view.PrefixDigests
	switch {
	case pd.Run != cd.Run:
		b.Segment, b.Cause = "run", CauseRun
	case pd.Injections != cd.Injections:
		b.Segment, b.Cause = "injections", CauseInjections
	case pd.Goal != cd.Goal:
		b.Segment, b.Cause = "goal", CauseGoal
	default:
		b.Segment, b.Cause = "history", CauseHistory
		b.Step = (d.Message - cur.view.GoalEnd) / 2
		if d.Kind == DiffLength && !d.HasB {
			b.Cause = CauseStepsRemoved
		}
	}
	c.Break = b
}

// extends reports whether cur's prompt begins with every message of
// prev's, block by block: the common case, answered without the
// difference firstDifference would describe.
func extends(prev, cur *cmpSide) bool {
	if len(prev.roles) > len(cur.roles) {
		return false
	}
	for i, role := range prev.roles {
		if role != cur.roles[i] || !slices.Equal(prev.texts[i], cur.texts[i]) {
			return false
		}
	}
	return true
}

// maxTokenCount is the largest count of tokens a usage may record, 2^53 − 1:
// every host gives it back exactly (a JavaScript number too), and no
// provider records more. A larger count is the call's invalid_usage.
const maxTokenCount = 1<<53 - 1

// readUsage reads one call's recorded usage: a provider's usage object, or
// a whole response holding one under "usage" ("usageMetadata": Gemini);
// nil for a msgpack nil. The shapes it reads are usageShapes' rows.
//
// A value that cannot be read as a usage (not a map, a key that is not a
// str, nested deeper than MaxValueDepth, a count that is not an int from 0
// to maxTokenCount) is an error with rest after it: that call's
// invalid_usage. Only a value that cannot be skipped (cut short) leaves
// rest at b. The value is read in place: no memory but its bytes.
func readUsage(b []byte) (*usageRead, []byte, *Error) {
	rest, e := msgp.Skip(b)
	if e != nil || len(b) == 0 {
		msg := "the value ends early"
		if e != nil {
			msg = e.Error()
		}
		return nil, b, newError(CodeMalformedRequest, "", "expected a provider's usage object (a map), which cannot be read: "+msg)
	}
	v := b[:len(b)-len(rest)]
	if v[0] == 0xc0 {
		return nil, rest, nil
	}
	if msgp.NextType(v) != msgp.MapType {
		return nil, rest, wrongType(v, "a provider's usage object ("+w().Map+"), or "+w().Nil+" where none was recorded")
	}
	if _, err := checkUsageValue(v, -1); err != nil { // its fields at depth 0, as an export body's (checkJSONValue)
		return nil, rest, err
	}
	m, base := v, "" // the usage object and its path
	var whole []byte // the response, when v is one: it holds the usage under usage (usageMetadata: Gemini)
	inner := [...]string{"usage", "usageMetadata"}
	for i, u := range usageFields(v, inner[:]) { // one pass over a usage of millions of keys
		if u != nil && msgp.NextType(u) == msgp.MapType {
			whole, m, base = v, u, "."+inner[i]
			break
		}
	}
	u, err := readUsageShapes(m, whole, base)
	if err != nil {
		return nil, rest, err
	}
	return &u, rest, nil
}

// checkUsageValue checks that the usage value at the start of b (skipped
// whole before: its maps' headers are true, a duplicate-key set is sized
// from them) has str keys and nests at most MaxValueDepth levels, and
// returns the bytes after it.
func checkUsageValue(b []byte, depth int) ([]byte, *Error) {
	if depth > abi.MaxValueDepth {
		return b, newError(CodeMalformedRequest, "", abi.MsgValueTooDeep)
	}
	switch msgp.NextType(b) {
	case msgp.MapType:
		n, p, err := readMapHeader(b)
		seen := keysSeen{keys: n}
		for i := uint32(0); err == nil && i < n; i++ {
			var key string
			at := p
			if key, p, err = readKey(p); err == nil {
				if !seen.add(key, at) {
					return p, duplicateKey(key)
				}
				if p, err = checkUsageValue(p, depth+1); err != nil {
					err = err.within(fieldSeg(key))
				}
			}
		}
		return p, err
	case msgp.ArrayType:
		n, p, err := readArrayHeader(b)
		for i := uint32(0); err == nil && i < n; i++ {
			if p, err = checkUsageValue(p, depth+1); err != nil {
				err = err.within(indexSeg(int(i)))
			}
		}
		return p, err
	}
	rest, _ := msgp.Skip(b)
	return rest, nil
}

// usageField is the value of key in the map at the start of b (checked by
// checkUsageValue): the last one, as a decoded map holds it.
func usageField(b []byte, key string) (v []byte, found bool) {
	n, p, _ := readMapHeader(b)
	for range n {
		k, after, _ := readKey(p)
		next, _ := msgp.Skip(after)
		if k == key {
			v, found = after[:len(after)-len(next)], true
		}
		p = next
	}
	return v, found
}

// readTokenCount reads a count of tokens at path at: an int from 0 to
// maxTokenCount.
func readTokenCount(x []byte, at string) (uint64, *Error) {
	var count uint64
	switch msgp.NextType(x) {
	case msgp.IntType:
		i, _, _ := msgp.ReadInt64Bytes(x)
		if i < 0 {
			return 0, newError(CodeMalformedRequest, at, "a count of tokens is never negative; give the provider's recorded usage as it is")
		}
		count = uint64(i)
	case msgp.UintType:
		count, _, _ = msgp.ReadUint64Bytes(x)
	default:
		if typ, _, ok := extOf(x); !ok || typ != abi.ExtBigInt {
			err := wrongType(x, "a count of tokens ("+w().Int+" ≥ 0, or "+w().Nil+")")
			return 0, err.within(at)
		}
		count = maxTokenCount + 1
	}
	if count > maxTokenCount {
		return 0, newError(CodeMalformedRequest, at, "a count of tokens over 2^53 − 1 (9007199254740991), more than any provider records and more than every host holds exactly; give the provider's recorded usage as it is")
	}
	return count, nil
}

// AppendCacheReportBytes is the module's cache_report call: a map
// {requests, usage}: requests an array of requests (each a map, or JSON
// text in a str, or msgpack in a bin, as a compare side), usage nil or an
// array of as many usages (readUsage). It appends the report's JSON.
func AppendCacheReportBytes(dst, request []byte, fromJSON func([]byte) ([]byte, *Error)) []byte {
	return appendJSONCall(dst, request, "the cache report", func() ([]byte, *Error) {
		reqs, errs, usage, usageErrs, err := readCacheArgs(request, fromJSON)
		if err != nil {
			err.Path = trimDot(err.Path) // a path of the arguments, as of a request (docs/SPEC.md §2.2)
			return nil, err
		}
		r := cacheReportOf(reqs, usage, usageErrs)
		for i, e := range errs {
			if e != nil {
				r.Calls[i].Err, r.Calls[i].Previous = e, -1
			}
		}
		return r.AppendJSON(dst), nil
	})
}

// readCacheArgs reads a cache_report request: each request's msgpack (nil
// and its error where the element cannot be made one) and the usages.
func readCacheArgs(b []byte, fromJSON func([]byte) ([]byte, *Error)) (reqs [][]byte, errs []*Error, usage []*usageRead, usageErrs []*Error, _ *Error) {
	if len(b) == 0 || msgp.NextType(b) != msgp.MapType {
		return nil, nil, nil, nil, wrongType(b, "a cache_report request (a map with the keys requests and usage)")
	}
	n, b, err := readMapHeader(b)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	haveUsage := false
	var seen keysSeen // as readExportArgs's
	for range n {
		var key string
		at := b
		if key, b, err = readKey(b); err != nil {
			return nil, nil, nil, nil, err
		}
		if !seen.add(key, at) {
			return nil, nil, nil, nil, duplicateKey(key)
		}
		switch key {
		case "requests":
			if reqs, errs, b, err = readRequestsArg(b, fromJSON); err != nil {
				return nil, nil, nil, nil, err
			}
		case "usage":
			if len(b) > 0 && b[0] == 0xc0 {
				b = b[1:]
				continue
			}
			if usage, usageErrs, b, err = readUsagesArg(b); err != nil {
				return nil, nil, nil, nil, err
			}
			haveUsage = true
		default:
			return nil, nil, nil, nil, unknownField(key, "a cache_report request", "requests, usage")
		}
	}
	if len(b) != 0 {
		return nil, nil, nil, nil, newError(CodeMalformedRequest, "", "bytes follow the cache_report request; send one map")
	}
	if haveUsage && len(usage) != len(reqs) {
		return nil, nil, nil, nil, newError(CodeMalformedRequest, "usage", "usage holds "+strconv.Itoa(len(usage))+" entries for "+strconv.Itoa(len(reqs))+" requests; give one per request ("+w().Nil+" where none was recorded)")
	}
	for i := range reqs {
		if reqs[i] == nil && errs[i] == nil {
			errs[i] = newError(CodeMalformedRequest, "", "this request cannot be read")
		}
	}
	return reqs, errs, usage, usageErrs, nil
}

// readUsagesArg reads the usage argument, a list: each call's usage read,
// or that call's error (its path a path of the call's usage, usage.…; the
// report goes on); a usage that cannot be read at all is the arguments'.
func readUsagesArg(b []byte) (usage []*usageRead, usageErrs []*Error, rest []byte, _ *Error) {
	m, b, err := readArrayHeader(b)
	if err != nil {
		return nil, nil, b, err.within(".usage")
	}
	usage, usageErrs = make([]*usageRead, m), make([]*Error, m)
	for i := range usage {
		var after []byte
		if usage[i], after, err = readUsage(b); err != nil {
			if len(after) == len(b) { // not read at all: the arguments cannot be
				return nil, nil, b, err.within(".usage" + indexSeg(i))
			}
			usageErrs[i] = err.within("usage")
		}
		b = after
	}
	return usage, usageErrs, b, nil
}

// readRequestsArg reads the requests argument: each request's msgpack,
// or its error (the report goes on); an array cut short is the whole
// request's error.
func readRequestsArg(b []byte, fromJSON func([]byte) ([]byte, *Error)) (reqs [][]byte, errs []*Error, rest []byte, _ *Error) {
	if len(b) > 0 && msgp.NextType(b) == msgp.MapType { // one request where the run's list belongs: never read as a list
		return nil, nil, b, newError(CodeMalformedRequest, ".requests", "expected a list of requests ("+w().Array+"), found one request ("+w().Map+"): give the run's requests in a list, in call order")
	}
	m, b, err := readArrayHeader(b)
	if err != nil {
		return nil, nil, b, err.within(".requests")
	}
	reqs, errs = make([][]byte, m), make([]*Error, m)
	for i := range reqs {
		var e *Error
		before := len(b)
		if reqs[i], b, e = compareSideBytes(b, fromJSON); e != nil {
			if len(b) == before { // not even skipped: the elements after it cannot be found
				if len(b) > 0 && b[0] == 0xc1 {
					e = newError(CodeMalformedRequest, "", "expected a request, found "+typeName(b)+
						", which no msgpack value starts with: the requests after it cannot be found; send the run's requests as msgpack")
				}
				return nil, nil, b, e.within2(".requests" + indexSeg(i)) // at the value that cannot be read (docs/SPEC.md §2.1)
			}
			errs[i] = e
		}
	}
	return reqs, errs, b, nil
}

// AppendJSON appends the report as JSON, keys in the order docs/SPEC.md
// §7.12 lists them.
func (r *CacheReport) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"calls":[`...)
	for i := range r.Calls {
		dst = r.Calls[i].appendJSON(comma(dst, i))
	}
	dst = r.appendGroups(append(dst, `],"groups":`...))
	dst = appendTotals(append(dst, `,"totals":`...), r.Totals())
	return append(dst, '}')
}

// appendGroups writes the report's groups, a JSON array.
func (r *CacheReport) appendGroups(dst []byte) []byte {
	dst = append(dst, '[')
	for i, g := range r.Groups {
		dst = appendDigestsJSON(append(comma(dst, i), `{"prefix_digests":`...), g.Digests)
		dst = appendJSONInt(append(dst, `,"calls":`...), int64(g.Calls))
		dst = appendJSONInt(append(dst, `,"prefix_chars":`...), g.PrefixChars)
		dst = appendJSONInt(append(dst, `,"cacheable_chars":`...), g.CacheableChars())
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendTotals writes a report's totals, a JSON object.
func appendTotals(dst []byte, t CacheTotals) []byte {
	dst = appendJSONInt(append(dst, `{"calls":`...), int64(t.Calls))
	dst = appendJSONInt(append(dst, `,"errors":`...), int64(t.Errors))
	dst = appendJSONInt(append(dst, `,"breaks":`...), int64(t.Breaks))
	dst = appendJSONInt(append(dst, `,"prompt_chars":`...), t.PromptChars)
	dst = appendJSONInt(append(dst, `,"cacheable_chars":`...), t.CacheableChars)
	dst = appendJSONInt(append(dst, `,"volatile_chars":`...), t.VolatileChars)
	dst = appendShare(append(dst, `,"cacheable_share":`...), t.CacheableChars, t.PromptChars)
	dst = appendJSONInt(append(dst, `,"usage_errors":`...), int64(t.UsageErrors))
	return append(dst, '}')
}

// AppendJSON appends the call's entry of the report as JSON (docs/SPEC.md
// §7.12), as the report and the cache_call call write it.
func (c *CacheCall) AppendJSON(dst []byte) []byte { return c.appendJSON(dst) }

func (c *CacheCall) appendJSON(dst []byte) []byte {
	if c.Err != nil {
		return AppendCompareError(dst, c.Err) // {"error": {code, message, path}}
	}
	dst = append(dst, `{"previous":`...)
	if c.Previous < 0 {
		dst = append(dst, "null"...)
	} else {
		dst = appendJSONInt(dst, int64(c.Previous))
	}
	dst = strconv.AppendBool(append(dst, `,"extends":`...), c.Extends)
	dst = append(dst, `,"break":`...)
	if b := c.Break; b == nil {
		dst = append(dst, "null"...)
	} else {
		dst = jsonstr.Append(append(dst, `{"segment":`...), b.Segment)
		dst = appendJSONInt(append(dst, `,"message":`...), int64(b.Message))
		dst = appendJSONInt(append(dst, `,"char":`...), int64(b.Char))
		dst = append(dst, `,"step":`...)
		if b.Step < 0 {
			dst = append(dst, "null"...)
		} else {
			dst = appendJSONInt(dst, int64(b.Step))
		}
		dst = jsonstr.Append(append(dst, `,"cause":`...), b.Cause)
		dst = jsonstr.Append(append(dst, `,"excerpt_before":`...), b.Before)
		dst = jsonOptStr(append(dst, `,"excerpt_previous":`...), b.Previous, b.HasPrevious)
		dst = jsonOptStr(append(dst, `,"excerpt_this":`...), b.This, b.HasThis)
		dst = append(dst, '}')
	}
	dst = appendJSONInt(append(dst, `,"prompt_chars":`...), c.PromptChars)
	dst = appendJSONInt(append(dst, `,"cacheable_prefix_chars":`...), c.CacheablePrefixChars)
	dst = appendShare(append(dst, `,"cacheable_share":`...), c.CacheablePrefixChars, c.PromptChars)
	dst = appendJSONInt(append(dst, `,"new_chars":`...), c.PromptChars-c.CacheablePrefixChars)
	dst = appendDigestsJSON(append(dst, `,"prefix_digests":`...), c.Digests)
	dst = append(dst, `,"usage":`...)
	if c.Usage == nil {
		dst = append(dst, "null"...)
	} else {
		dst = c.Usage.appendJSON(dst)
	}
	return append(dst, '}')
}

// appendJSON writes the call's usage, a JSON object.
func (u *CacheUsage) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"cached_tokens":`...)
	if u.Class == UsageNone || u.Class == UsageInvalid || u.Class == UsageUnknown {
		dst = append(dst, "null"...)
	} else {
		dst = appendJSONInt(dst, u.CachedTokens)
	}
	dst = append(dst, `,"written_tokens":`...)
	if u.WrittenTokens == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendJSONInt(dst, *u.WrittenTokens)
	}
	dst = jsonstr.Append(append(dst, `,"class":`...), u.Class)
	if u.MissReason != "" {
		dst = jsonstr.Append(append(dst, `,"miss_reason":`...), u.MissReason)
		dst = strconv.AppendBool(append(dst, `,"miss_reason_disagrees":`...), u.MissReasonDisagrees)
	}
	if u.Note != "" {
		dst = jsonstr.Append(append(dst, `,"note":`...), u.Note)
	}
	if u.Err != nil { // {"error": {…}} as a member: its braces dropped
		at := len(dst)
		dst = AppendCompareError(dst, u.Err)
		dst[at], dst = ',', dst[:len(dst)-1]
	}
	return append(dst, '}')
}

func appendDigestsJSON(dst []byte, d PrefixDigests) []byte {
	dst = jsonstr.Append(append(dst, `{"run":`...), d.Run)
	dst = jsonstr.Append(append(dst, `,"injections":`...), d.Injections)
	dst = jsonstr.Append(append(dst, `,"goal":`...), d.Goal)
	return append(dst, '}')
}

// appendShare writes part/whole with four decimals (0 for an empty whole),
// rounded down so that 1 means all of it.
func appendShare(dst []byte, part, whole int64) []byte {
	q := shareQ(part, whole)
	dst = strconv.AppendInt(dst, q/10000, 10)
	if r := q % 10000; r != 0 {
		s := strconv.FormatInt(10000+r, 10)[1:]
		for s[len(s)-1] == '0' {
			s = s[:len(s)-1]
		}
		dst = append(append(dst, '.'), s...)
	}
	return dst
}
