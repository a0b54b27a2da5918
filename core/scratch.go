package core

import "sync"

// scratch holds the working memory of one AssembleBytes call: the decoded
// request, the code-point counts, the assembly plan and the arenas their
// slices are cut from. Nothing of it outlives the call (the response is
// written to its own buffer), so it is pooled: a steady stream of calls then
// allocates almost nothing but its response. In Go's WebAssembly code an
// allocation costs several hundred nanoseconds, which is most of a small
// request's time. Every decode runs in a scratch: AssembleBytes and the typed
// checks (Assemble, NewPrompt, ValidateTemplate) take a pooled one and copy
// out what they return; DecodeRequest takes a fresh one and returns the
// request in it, which then belongs to the caller.
type scratch struct {
	req      Request
	budget   int64 // req.MaxPromptChars points here
	tc       textCounts
	a        assembly
	msgs     []Message
	blocks   []Block
	entries  []Injection
	steps    []Step
	chans    []channel              // the decoded channels, in wire order; build sorts them
	injSent  bool                   // the request had an injections key
	inj      map[string][]Injection // the channels past fewChannels, by name (hasChannel)
	out      []outMsg
	injected []Injected
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooled bounds the arenas a pooled scratch keeps (in elements); a call
// that needed more lets them go rather than pin a large request's memory.
const maxPooled = 1 << 14

// maxHint bounds any preallocation taken from a header's count: a header
// can claim four billion elements in five bytes.
const maxHint = 1 << 12

// hint is the capacity to reserve for n elements announced with rest bytes
// left, each taking at least minSize bytes.
func hint(n uint32, rest, minSize int) int {
	return min(int(n), rest/minSize, maxHint)
}

// reserve cuts a slice of length 0 and capacity n from *arena. Appending
// past n moves to the heap, as usual. The slice is never nil (an empty array
// decodes as an empty slice, as DecodeRequest has always returned it).
func reserve[T any](arena *[]T, n int) []T {
	a := *arena
	if a == nil || cap(a)-len(a) < n {
		a = make([]T, 0, max(n, 2*cap(a), 16))
	}
	s := a[len(a) : len(a) : len(a)+n]
	*arena = a[:len(a)+n]
	return s
}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// release clears every reference into the request (decoded strings point
// into its buffer) and returns sc to the pool, unless it grew too large.
func (sc *scratch) release() {
	sc.req = Request{}
	enc := sc.a.enc[:0] // appendShared's buffer, kept (bounded there)
	lay := sc.a.lay     // layout's arrays, kept unless a large prompt grew them
	if lay != nil && cap(lay.blockStart) > 1<<16 {
		lay = nil
	}
	sc.a = assembly{enc: enc, lay: lay}
	sc.tc.run, sc.tc.goal, sc.tc.steps = sc.tc.run[:0], sc.tc.goal[:0], sc.tc.steps[:0]
	clear(sc.msgs)
	clear(sc.blocks)
	clear(sc.entries)
	clear(sc.steps)
	clear(sc.chans)
	clear(sc.out)
	clear(sc.injected)
	if len(sc.inj) > 0 {
		clear(sc.inj)
	}
	sc.injSent = false
	sc.msgs, sc.blocks, sc.entries, sc.steps = sc.msgs[:0], sc.blocks[:0], sc.entries[:0], sc.steps[:0]
	sc.chans, sc.out, sc.injected = sc.chans[:0], sc.out[:0], sc.injected[:0]
	if cap(sc.msgs) > maxPooled || cap(sc.blocks) > maxPooled || cap(sc.entries) > maxPooled ||
		cap(sc.steps) > maxPooled || cap(sc.out) > 2*maxPooled || cap(sc.tc.steps) > 2*maxPooled ||
		cap(sc.chans) > maxPooled || len(sc.inj) > maxPooled {
		return
	}
	scratchPool.Put(sc)
}

// fewChannels is how many channels hasChannel scans before it keeps them
// in a map: a request has a few, and a map costs hundreds of nanoseconds
// per operation in Go's WebAssembly code (and its clear as much); a request
// of thousands still takes linear time.
const fewChannels = 8

// hasChannel reports whether a channel named ch was decoded already.
func (sc *scratch) hasChannel(ch string) bool {
	if len(sc.chans) <= fewChannels {
		for i := range sc.chans {
			if equalText(sc.chans[i].name, ch) {
				return true
			}
		}
		return false
	}
	_, dup := sc.inj[ch]
	return dup
}

// addChannel appends a decoded channel to sc.chans, and to sc.inj once
// there are more than fewChannels.
func (sc *scratch) addChannel(ch string, entries []Injection) {
	sc.chans = append(sc.chans, channel{name: ch, entries: entries})
	if len(sc.chans) <= fewChannels {
		return
	}
	if sc.inj == nil {
		sc.inj = make(map[string][]Injection)
	}
	if len(sc.chans) == fewChannels+1 {
		for _, c := range sc.chans[:fewChannels] {
			sc.inj[c.name] = c.entries
		}
	}
	sc.inj[ch] = entries
}

// injections is the request's injections map, made from sc.chans: nil when
// the request had no injections key, else a new map (empty for {}).
func (sc *scratch) injections() map[string][]Injection {
	if !sc.injSent {
		return nil
	}
	m := make(map[string][]Injection, len(sc.chans))
	for _, c := range sc.chans {
		m[c.name] = c.entries
	}
	return m
}
