package engine

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// The messages of a failed call, the same on every host (Go, Python, JS):
// what happened and what the host did, never the engine's own words (those
// go into Failure.Detail).
const (
	MsgOutOfMemory = "the assembly module ran out of memory; the instance was discarded and the next call gets a fresh one"
	MsgTrapped     = "the assembly module trapped; the instance was discarded and the next call gets a fresh one"
	MsgBadResponse = "the assembly module returned bytes that are not a response; is the module from the same release as this binding?"
)

// Failure is a call that the module did not answer: it trapped, exited, ran
// out of memory, or the host could not instantiate it.
type Failure struct {
	Message string // one of the Msg constants
	Detail  string // the engine's error and the module's stderr, bounded
}

// StderrKeep bounds the module's stderr kept per instance (and in a
// Failure's Detail).
const StderrKeep = 4096

// Pool runs calls on at most MaxInstances instances alive at once; a call
// waits while all are busy. An instance whose linear memory exceeds
// RecycleAboveBytes after a call is discarded (linear memory never shrinks);
// an instance that failed is discarded.
type Pool struct {
	engine     Engine
	tokens     chan struct{} // one per instance that may be alive
	mu         sync.Mutex
	idle       []Instance
	recycle    uint64
	peakMemory atomic.Uint64
	closeOnce  sync.Once
}

// NewPool wraps an engine in a pool configured by c (defaults filled).
func NewPool(e Engine, c Config) *Pool {
	c = c.WithDefaults()
	return &Pool{engine: e, tokens: make(chan struct{}, c.MaxInstances), recycle: c.RecycleAboveBytes}
}

// Name names the engine.
func (p *Pool) Name() string { return p.engine.Name() }

// Call runs fn on request in an instance and returns the response bytes, or
// the failure.
func (p *Pool) Call(fn Export, request []byte) ([]byte, *Failure) {
	inst, err := p.get()
	if err != nil {
		return nil, &Failure{Message: MsgTrapped, Detail: fmt.Sprintf("%s: cannot instantiate the module: %v", p.engine.Name(), err)}
	}
	resp, stage, err := p.run(inst, fn, request)
	if err != nil {
		f := classify(p.engine.Name(), stage, err, inst.Stderr())
		p.put(inst, false)
		return nil, f
	}
	mem := inst.MemorySize()
	for {
		old := p.peakMemory.Load()
		if mem <= old || p.peakMemory.CompareAndSwap(old, mem) {
			break
		}
	}
	p.put(inst, mem <= p.recycle)
	return resp, nil
}

// run is one call's protocol: alloc, write, call, read, free. A panic of the
// engine's host code is an error of the stage it happened in.
func (p *Pool) run(inst Instance, fn Export, request []byte) (resp []byte, stage string, err error) {
	stage = "alloc"
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the host panicked: %v", r)
		}
	}()
	ptr, err := inst.Alloc(uint32(len(request)))
	if err != nil {
		return nil, stage, err
	}
	stage = "write"
	if err := inst.Write(ptr, request); err != nil {
		return nil, stage, err
	}
	stage = fn.Name()
	packed, err := inst.Call(fn, ptr, uint32(len(request)))
	if err != nil {
		return nil, stage, err
	}
	stage = "read"
	view, err := inst.Read(uint32(packed>>32), uint32(packed))
	if err != nil {
		return nil, stage, err
	}
	resp = append([]byte(nil), view...)
	stage = "free"
	return resp, stage, inst.Free(uint32(packed >> 32))
}

// classify turns an engine error into the host-independent failure: out of
// memory when the module's Go runtime said so (memory.grow failed, or the
// limit was hit), else a trap. Detail keeps the engine's first line, the
// trap, and the module's stderr.
func classify(engine, stage string, err error, stderr string) *Failure {
	msg := MsgTrapped
	if strings.Contains(stderr, "out of memory") || strings.Contains(err.Error(), "out of memory") {
		msg = MsgOutOfMemory
	}
	d := fmt.Sprintf("%s: %s failed: %s", engine, stage, firstLine(err))
	if s := strings.TrimSpace(stderr); s != "" {
		d += "\nmodule stderr:\n" + s
	}
	return &Failure{Message: msg, Detail: d}
}

// firstLine keeps an engine's error to its first line (traps carry a
// backtrace) and names the trap.
func firstLine(e error) string {
	s := e.Error()
	var trap string
	if i := strings.Index(s, "wasm trap: "); i >= 0 {
		trap = s[i:]
		if j := strings.IndexByte(trap, '\n'); j >= 0 {
			trap = trap[:j]
		}
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if trap != "" && !strings.Contains(s, trap) {
		s += ": " + trap
	}
	return s
}

// get waits for a free slot, then takes an idle instance or creates one.
func (p *Pool) get() (Instance, error) {
	p.tokens <- struct{}{}
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		inst := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return inst, nil
	}
	p.mu.Unlock()
	inst, err := p.engine.NewInstance()
	if err != nil {
		<-p.tokens
		return nil, err
	}
	return inst, nil
}

// put returns inst to the idle list (or closes it) and frees its slot.
func (p *Pool) put(inst Instance, keep bool) {
	if keep {
		p.mu.Lock()
		p.idle = append(p.idle, inst)
		p.mu.Unlock()
	} else {
		inst.Close()
	}
	<-p.tokens
}

// Warm makes sure one instance is ready.
func (p *Pool) Warm() error {
	inst, err := p.get()
	if err != nil {
		return err
	}
	p.put(inst, true)
	return nil
}

// Instantiate creates one instance and closes it (a health check, and what
// benchmarks time as instantiation).
func (p *Pool) Instantiate() error {
	inst, err := p.engine.NewInstance()
	if err != nil {
		return err
	}
	inst.Close()
	return nil
}

// PeakMemoryBytes is the largest linear memory of an instance after a call.
func (p *Pool) PeakMemoryBytes() uint64 { return p.peakMemory.Load() }

// Close releases the idle instances and the engine; calls must not be in
// flight.
func (p *Pool) Close() error {
	var err error
	p.closeOnce.Do(func() {
		p.mu.Lock()
		for _, inst := range p.idle {
			inst.Close()
		}
		p.idle = nil
		p.mu.Unlock()
		err = p.engine.Close()
	})
	return err
}

// StderrBuffer keeps the first StderrKeep bytes written to it; engines give
// it to the module as its stderr.
type StderrBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *StderrBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := StderrKeep - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (b *StderrBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
