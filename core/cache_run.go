package core

import (
	"slices"
	"strconv"

	"github.com/polyloop/assembly/core/msgp"
)

// A run's cache report made call by call (docs/SPEC.md §7.15): each call's
// entry as the loop makes it, equal to the entry cache_report gives it over
// the same calls, at a cost that grows with what the call adds when its
// prompt extends the previous one (a Prompt's new steps), and the whole
// report on demand. cacheReportOf runs the same steps over a recorded run.

// runState is what a run keeps from call to call: the groups, the totals
// and the last valid call.
type runState struct {
	groups []CacheGroup
	index  map[PrefixDigests]int
	t      runTotals
	last   *runLast // nil before the first valid call
}

// runTotals are the counts the report's totals are made of.
type runTotals struct {
	calls, errors, breaks int
	prompt, cacheable     int64
	usageErrors           int // calls whose usage cannot be read (invalid_usage)
}

// runLast is what a call keeps of the last valid call's prompt without
// its texts: enough to answer a call whose prompt extends it.
type runLast struct {
	index       int // its call number
	messages    int
	promptChars int64
	stableChars int64
	digests     PrefixDigests
}

func newRunState() *runState { return &runState{index: map[PrefixDigests]int{}} }

// calls is the number of calls so far.
func (r *runState) calls() int { return r.t.calls + r.t.errors }

// fail records an invalid call.
func (r *runState) fail(c *CacheCall, err *Error) {
	c.Err, c.Previous = err, -1
	r.t.errors++
}

// record records a valid call whose prompt is cur, compared with prev (the
// last valid call's prompt, nil for none), with its recorded usage.
func (r *runState) record(c *CacheCall, cur, prev *cmpSide, u usageOf) {
	v := cur.view
	c.Previous = -1
	c.PromptChars, c.Digests = v.PromptChars, v.PrefixDigests
	for _, ch := range v.MessageChars[:v.GoalEnd] {
		c.stable += ch
	}
	if prev != nil {
		c.Previous = r.last.index
		c.compare(prev, cur)
	}
	r.commit(c, len(cur.roles), u)
}

// extend records a valid call whose prompt is the last valid call's,
// followed by more messages of chars code points.
func (r *runState) extend(c *CacheCall, more int, chars int64, u usageOf) {
	l := r.last
	c.Previous, c.Extends = l.index, true
	c.PromptChars, c.CacheablePrefixChars = l.promptChars+chars, l.promptChars
	c.Digests, c.stable = l.digests, l.stableChars
	r.commit(c, l.messages+more, u)
}

// commit counts a valid call of n messages in its group and the totals,
// classes its usage and makes it the last valid call.
func (r *runState) commit(c *CacheCall, n int, u usageOf) {
	at := r.calls()
	if g, ok := r.index[c.Digests]; ok {
		r.groups[g].Calls++
	} else {
		r.index[c.Digests] = len(r.groups)
		r.groups = append(r.groups, CacheGroup{Digests: c.Digests, Calls: 1, PrefixChars: c.stable})
	}
	if u.given {
		c.Usage = classify(c, u.read)
		if u.err != nil {
			c.Usage = &CacheUsage{Class: UsageInvalid, Err: u.err}
		}
	}
	r.t.calls++
	if c.Usage != nil && c.Usage.Class == UsageInvalid {
		r.t.usageErrors++
	}
	r.t.prompt += c.PromptChars
	r.t.cacheable += c.CacheablePrefixChars
	if c.Break != nil {
		r.t.breaks++
	}
	r.last = &runLast{index: at, messages: n, promptChars: c.PromptChars, stableChars: c.stable, digests: c.Digests}
}

// totals are the report's totals made of t.
func (t runTotals) totals() CacheTotals {
	return CacheTotals{Calls: t.calls, Errors: t.errors, Breaks: t.breaks, PromptChars: t.prompt, CacheableChars: t.cacheable,
		VolatileChars: t.prompt - t.cacheable, CacheableShare: float64(shareQ(t.cacheable, t.prompt)) / 10000, UsageErrors: t.usageErrors}
}

// usageOf is one call's recorded usage as readUsage read it.
type usageOf struct {
	given bool       // a usage argument was given (the call has a class)
	read  *usageRead // nil: none recorded
	err   *Error     // it cannot be read: invalid_usage
}

// CacheRun is a run's cache report made call by call: Call and CallPrompt
// answer each call's entry as the loop makes it, Report the whole run's,
// equal to CacheReportOf over the same requests and usage. A CacheRun is
// not safe for concurrent use.
type CacheRun struct {
	st        *runState
	calls     []CacheCall
	sides     [2]cmpSide
	views     [2]View
	prev      *cmpSide // the last valid call's prompt, unless it was a Prompt's
	prompt    *Prompt  // the last valid call's Prompt, and its message count
	promptLen int
}

// NewCacheRun starts a run.
func NewCacheRun() *CacheRun {
	r := &CacheRun{st: newRunState()}
	r.sides[0].view, r.sides[1].view = &r.views[0], &r.views[1]
	return r
}

// Call reports on the run's next call: request is its wire request (or a
// prompt form, docs/SPEC.md §7.14) as msgpack; usage the provider's usage
// (or response) as msgpack, nil where none was recorded. It returns the
// call's entry; an invalid request is the entry's Err.
func (r *CacheRun) Call(request, usage []byte) *CacheCall {
	c := &CacheCall{}
	u := readCallUsage(usage)
	side := &r.sides[0]
	if r.prev == side {
		side = &r.sides[1]
	}
	prev := r.prev
	request = slices.Clone(request) // the side's texts alias it until the side is planned again
	if err := planSide(side, request); err != nil {
		r.st.fail(c, err)
		return r.keep(c)
	}
	if prev == nil && r.prompt != nil { // the last valid call was a Prompt's: its messages then
		prev = promptSide(r.prompt, r.promptLen, &r.sides[1-sideIndex(r, side)])
	}
	r.st.record(c, side, prev, u)
	r.prev, r.prompt = side, nil
	return r.keep(c)
}

// CallPrompt reports on the run's next call, whose prompt is p as it is
// now. When the last valid call was p's too, p has only grown since (a
// Prompt only appends), so the entry costs what p added.
func (r *CacheRun) CallPrompt(p *Prompt, usage []byte) *CacheCall {
	c := &CacheCall{}
	u := readCallUsage(usage)
	n := len(p.resp.Messages)
	if r.prompt == p && n >= r.promptLen {
		var chars int64
		for _, ch := range p.resp.MessageChars[r.promptLen:n] {
			chars += ch
		}
		r.st.extend(c, n-r.promptLen, chars, u)
	} else {
		side := &r.sides[0]
		if r.prev == side {
			side = &r.sides[1]
		}
		prev := r.prev
		if prev == nil && r.prompt != nil {
			prev = promptSide(r.prompt, r.promptLen, &r.sides[1-sideIndex(r, side)])
		}
		promptSide(p, n, side)
		r.st.record(c, side, prev, u)
	}
	r.prompt, r.promptLen, r.prev = p, n, nil
	return r.keep(c)
}

func sideIndex(r *CacheRun, s *cmpSide) int {
	if s == &r.sides[0] {
		return 0
	}
	return 1
}

func (r *CacheRun) keep(c *CacheCall) *CacheCall {
	r.calls = append(r.calls, *c)
	return c
}

// Report is the run's report so far, as CacheReportOf answers it.
func (r *CacheRun) Report() *CacheReport {
	return &CacheReport{Calls: slices.Clone(r.calls), Groups: slices.Clone(r.st.groups)}
}

// promptSide sets s to the first n messages of p, as planSide reads a
// request's.
func promptSide(p *Prompt, n int, s *cmpSide) *cmpSide {
	msgs := p.resp.Messages[:n]
	s.roles, s.texts, s.chars = grown(s.roles, n), grown(s.texts, n), grown(s.chars, n)
	var prompt int64
	for i, m := range msgs {
		s.roles[i], s.chars[i] = m.Role, p.resp.MessageChars[i]
		texts := make([]string, len(m.Content))
		for j, b := range m.Content {
			texts[j] = b.Text
		}
		s.texts[i] = texts
		prompt += s.chars[i]
	}
	*s.view = View{RunEnd: p.seg.RunEnd, InjectionsEnd: p.seg.InjectionsEnd, GoalEnd: p.seg.GoalEnd, MessageChars: s.chars,
		PromptChars: prompt, PrefixDigests: p.resp.PrefixDigests}
	return s
}

// readCallUsage reads one call's usage argument (msgpack; nil: not given).
func readCallUsage(b []byte) usageOf {
	if b == nil {
		return usageOf{}
	}
	read, rest, err := readUsage(b)
	if err == nil && len(rest) != 0 {
		err = newError(CodeMalformedRequest, "", "bytes follow the usage; give one value")
	}
	if err != nil {
		return usageOf{given: true, err: err.within("usage")}
	}
	return usageOf{given: true, read: read}
}

// AppendCacheCallBytes is the module's cache_call call: a map {run,
// prompt, previous, usage} (docs/SPEC.md §7.15) answered with the call's
// entry and the run's state as JSON: {"call": …, "run": …}.
func AppendCacheCallBytes(dst, request []byte, fromJSON func([]byte) ([]byte, *Error)) []byte {
	return appendJSONCall(dst, request, "the cache call", func() ([]byte, *Error) {
		args, err := readCacheCallArgs(request, fromJSON)
		if err != nil {
			err.Path = trimDot(err.Path)
			return nil, err
		}
		st, err := readRunState(args.run, fromJSON)
		if err != nil {
			return nil, err.within2("run")
		}
		c := &CacheCall{}
		var u usageOf
		if args.haveUsage {
			u = readCallUsage(args.usage)
		}
		if err := st.call(c, args, fromJSON, u); err != nil {
			return nil, err
		}
		dst = c.appendJSON(append(dst, `{"call":`...))
		return append(st.appendJSON(append(dst, `,"run":`...)), '}'), nil
	})
}

// cacheCallArgs are the cache_call's arguments, each its msgpack (nil when
// absent or nil).
type cacheCallArgs struct {
	run, prompt, previous, usage []byte
	haveUsage                    bool
}

func readCacheCallArgs(b []byte, fromJSON func([]byte) ([]byte, *Error)) (args cacheCallArgs, _ *Error) {
	if len(b) == 0 || msgp.NextType(b) != msgp.MapType {
		return args, wrongType(b, "a cache_call request (a map with the keys run, prompt, previous and usage)")
	}
	n, b, err := readMapHeader(b)
	if err != nil {
		return args, err
	}
	var seen [4]bool
	for range n {
		var key string
		if key, b, err = readKey(b); err != nil {
			return args, err
		}
		var k int
		switch key {
		case "run":
		case "prompt":
			k = 1
		case "previous":
			k = 2
		case "usage":
			k = 3
		default:
			return args, unknownField(key, "a cache_call request", "run, prompt, previous, usage")
		}
		if seen[k] {
			return args, duplicateKey(key)
		}
		seen[k] = true
		rest, e := msgp.Skip(b)
		if e != nil {
			return args, endsEarly().within(fieldSeg(key))
		}
		v := b[:len(b)-len(rest)]
		if v[0] == 0xc0 {
			v = nil
		}
		*[4]*[]byte{&args.run, &args.prompt, &args.previous, &args.usage}[k] = v
		if k == 3 {
			args.haveUsage, args.usage = true, b[:len(b)-len(rest)] // nil: no usage recorded (no_usage)
		}
		b = rest
	}
	if len(b) != 0 {
		return args, newError(CodeMalformedRequest, "", "bytes follow the cache_call request; send one map")
	}
	if args.prompt == nil {
		return args, missingField("prompt", "a cache_call request")
	}
	return args, nil
}

// call answers one call of the run into c, and moves the state on.
func (r *runState) call(c *CacheCall, args cacheCallArgs, fromJSON func([]byte) ([]byte, *Error), u usageOf) *Error {
	if len(args.prompt) > 0 && msgp.NextType(args.prompt) == msgp.MapType && hasKey(args.prompt, "extends") {
		more, chars, err := readExtension(args.prompt, r.last)
		if err != nil {
			return err.within2("prompt")
		}
		r.extend(c, more, chars, u)
		return nil
	}
	var sides [2]cmpSide
	var views [2]View
	sides[0].view, sides[1].view = &views[0], &views[1]
	cur, err := sideOf(args.prompt, fromJSON)
	if err == nil {
		err = planSide(&sides[1], cur)
	}
	if err != nil {
		r.fail(c, err)
		return nil
	}
	var prev *cmpSide
	if r.last != nil {
		if args.previous == nil {
			return newError(CodeMalformedRequest, "previous", "the run has a previous call and this prompt does not extend it: give the previous call's prompt, so that the two can be compared")
		}
		p, err := sideOf(args.previous, fromJSON)
		if err == nil {
			err = planSide(&sides[0], p)
		}
		if err != nil {
			return err.within2("previous")
		}
		if l := r.last; len(sides[0].roles) != l.messages || views[0].PromptChars != l.promptChars || views[0].PrefixDigests != l.digests {
			return newError(CodeMalformedRequest, "previous", "this is not the run's last valid prompt (its messages, code points or digests differ); give the prompt of call "+strconv.Itoa(l.index))
		}
		prev = &sides[0]
	}
	r.record(c, &sides[1], prev, u)
	return nil
}

// sideOf is a prompt argument's msgpack: a request or prompt form, as a
// map, JSON text or msgpack in a bin.
func sideOf(b []byte, fromJSON func([]byte) ([]byte, *Error)) ([]byte, *Error) {
	side, _, err := compareSideBytes(b, fromJSON)
	return side, err
}

// hasKey reports whether the msgpack map b has key.
func hasKey(b []byte, key string) bool {
	n, b, err := readMapHeader(b)
	for i := uint32(0); err == nil && i < n; i++ {
		var k string
		if k, b, err = readKey(b); err != nil || k == key {
			return err == nil
		}
		rest, e := msgp.Skip(b)
		if e != nil {
			return false
		}
		b = rest
	}
	return false
}

// readExtension reads {extends, messages}: the last valid call's first
// `extends` messages (all of them), then messages. It returns how many
// messages it adds and their code points.
func readExtension(b []byte, last *runLast) (int, int64, *Error) {
	n, b, err := readMapHeader(b)
	if err != nil {
		return 0, 0, err
	}
	extends, more, chars := -1, -1, int64(0)
	for range n {
		var key string
		if key, b, err = readKey(b); err != nil {
			return 0, 0, err
		}
		switch key {
		case "extends":
			if extends >= 0 {
				return 0, 0, duplicateKey(key)
			}
			var v uint64
			if v, b, err = readUintOpt(b); err != nil {
				return 0, 0, err.within(".extends")
			}
			extends = int(min(v, 1<<31))
		case "messages":
			if more >= 0 {
				return 0, 0, duplicateKey(key)
			}
			var counts []int
			var msgs []Message
			if msgs, b, err = decodeMessages(b, &counts, new(scratch)); err != nil {
				return 0, 0, err.within(".messages")
			}
			more = len(msgs)
			for _, ch := range counts {
				chars += int64(ch)
			}
		default:
			return 0, 0, unknownField(key, "a prompt's extension", "extends, messages")
		}
	}
	switch {
	case extends < 0:
		return 0, 0, missingField("extends", "a prompt's extension")
	case more < 0:
		return 0, 0, missingField("messages", "a prompt's extension")
	case last == nil:
		return 0, 0, newError(CodeMalformedRequest, "extends", "the run has no previous valid call to extend; give the whole prompt")
	case extends != last.messages:
		return 0, 0, newError(CodeMalformedRequest, "extends", "the run's last valid prompt has "+strconv.Itoa(last.messages)+" messages, not "+strconv.Itoa(extends)+"; give the whole prompt and the previous one")
	}
	return more, chars, nil
}

// appendJSON writes the run's state: the report's groups and totals so
// far, and the last valid call (docs/SPEC.md §7.15).
func (r *runState) appendJSON(dst []byte) []byte {
	rep := CacheReport{Groups: r.groups}
	dst = rep.appendGroups(append(dst, `{"groups":`...))
	dst = appendTotals(append(dst, `,"totals":`...), r.t.totals())
	dst = append(dst, `,"last":`...)
	if l := r.last; l == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendJSONInt(append(dst, `{"call":`...), int64(l.index))
		dst = appendJSONInt(append(dst, `,"messages":`...), int64(l.messages))
		dst = appendJSONInt(append(dst, `,"prompt_chars":`...), l.promptChars)
		dst = appendJSONInt(append(dst, `,"stable_chars":`...), l.stableChars)
		dst = appendDigestsJSON(append(dst, `,"prefix_digests":`...), l.digests)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// readRunState reads the run argument: nil for a new run, else the state
// the previous call answered (a map, or its JSON text).
func readRunState(b []byte, fromJSON func([]byte) ([]byte, *Error)) (*runState, *Error) {
	r := newRunState()
	if b == nil {
		return r, nil
	}
	m, err := sideOf(b, fromJSON)
	if err != nil {
		return nil, err
	}
	v, _, e := msgp.ReadIntfBytes(m)
	obj, ok := v.(map[string]any)
	if e != nil || !ok {
		return nil, newError(CodeMalformedRequest, "", "expected the run state the previous cache_call answered (a map), found "+typeName(m))
	}
	var d stateReader
	for _, g := range d.list(obj, "groups") {
		gm := d.obj(g, "groups[]")
		dg := d.digests(gm)
		if _, dup := r.index[dg]; dup {
			d.fail("groups", "two groups have the same prefix digests")
		}
		r.index[dg] = len(r.groups)
		r.groups = append(r.groups, CacheGroup{Digests: dg, Calls: int(d.int(gm, "calls")), PrefixChars: d.int(gm, "prefix_chars")})
	}
	t := d.obj(obj["totals"], "totals")
	r.t = runTotals{calls: int(d.int(t, "calls")), errors: int(d.int(t, "errors")), breaks: int(d.int(t, "breaks")),
		prompt: d.int(t, "prompt_chars"), cacheable: d.int(t, "cacheable_chars"),
		usageErrors: int(d.int(t, "usage_errors"))}
	if l, ok := obj["last"]; ok && l != nil {
		lm := d.obj(l, "last")
		r.last = &runLast{index: int(d.int(lm, "call")), messages: int(d.int(lm, "messages")), promptChars: d.int(lm, "prompt_chars"),
			stableChars: d.int(lm, "stable_chars"), digests: d.digests(lm)}
		if r.last.index >= r.calls() {
			d.fail("last.call", "the last valid call comes after the run's calls")
		}
	} else if r.t.calls > 0 {
		d.fail("last", "the run has valid calls and no last one")
	}
	if d.err != nil {
		return nil, d.err
	}
	return r, nil
}

// stateReader reads a decoded run state, keeping its first error.
type stateReader struct{ err *Error }

func (d *stateReader) fail(path, msg string) {
	if d.err == nil {
		d.err = newError(CodeMalformedRequest, path, msg+"; give back the run state the previous cache_call answered, as it was")
	}
}

func (d *stateReader) obj(v any, path string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		d.fail(path, "expected a map")
	}
	return m
}

func (d *stateReader) list(m map[string]any, key string) []any {
	l, ok := m[key].([]any)
	if !ok {
		d.fail(key, "expected an array")
	}
	return l
}

func (d *stateReader) int(m map[string]any, key string) int64 {
	switch n := m[key].(type) {
	case int64:
		if n >= 0 {
			return n
		}
	case uint64:
		if n < 1<<62 {
			return int64(n)
		}
	}
	d.fail(key, "expected a count (an int ≥ 0)")
	return 0
}

func (d *stateReader) digests(m map[string]any) PrefixDigests {
	pd := d.obj(m["prefix_digests"], "prefix_digests")
	s := func(k string) string {
		v, ok := pd[k].(string)
		if !ok {
			d.fail("prefix_digests."+k, "expected a digest (a str)")
		}
		return v
	}
	return PrefixDigests{Run: s("run"), Injections: s("injections"), Goal: s("goal")}
}
