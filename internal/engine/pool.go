package engine

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/polyloop/assembly/core/abi"
)

// Failure is a call that the module did not answer: it trapped, exited, ran
// out of memory, or the host could not instantiate it.
type Failure struct {
	Message string // abi.MsgOutOfMemory or abi.MsgTrapped
	Detail  string // the engine's error and the module's stderr, bounded
}

// Pool runs calls on at most MaxInstances instances alive at once; a call
// waits while all are busy. An instance whose linear memory exceeds
// RecycleAboveBytes after a call is discarded (linear memory never shrinks);
// an instance that failed is discarded.
type Pool struct {
	engine     Engine
	tokens     chan struct{} // one per instance that may be alive
	mu         sync.Mutex
	idle       []*slot
	recycle    uint64
	peakMemory atomic.Uint64
	closeOnce  sync.Once
}

// slot is an instance and what the pool knows of its request buffer.
type slot struct {
	inst          Instance
	ptr, capacity uint32
	sized         bool // buffer was called: ptr and capacity are its answer
}

// NewPool wraps an engine in a pool configured by c (defaults filled).
func NewPool(e Engine, c Config) *Pool {
	c = c.WithDefaults()
	return &Pool{engine: e, tokens: make(chan struct{}, c.MaxInstances), recycle: c.RecycleAboveBytes}
}

// Name names the engine.
func (p *Pool) Name() string { return p.engine.Name() }

// Call runs call c on request in an instance and returns the response bytes, or
// the failure.
func (p *Pool) Call(c abi.Call, request []byte) ([]byte, *Failure) {
	return p.CallAppend(c, nil, request)
}

// CallAppend is Call that appends the response to dst and returns the
// extended slice (dst as it was on a failure): a caller that reuses one
// buffer spares the Go heap a fresh response per call.
func (p *Pool) CallAppend(c abi.Call, dst, request []byte) ([]byte, *Failure) {
	s, err := p.get()
	if err != nil {
		return dst, &Failure{Message: abi.MsgTrapped, Detail: fmt.Sprintf("%s: cannot instantiate the module: %v", p.engine.Name(), err)}
	}
	resp, stage, err := run(s, c, dst, request)
	if err != nil {
		f := classify(p.engine.Name(), stage, err, s.inst.Stderr())
		p.put(s, false)
		return dst, f
	}
	mem := s.inst.MemorySize()
	for {
		old := p.peakMemory.Load()
		if mem <= old || p.peakMemory.CompareAndSwap(old, mem) {
			break
		}
	}
	p.put(s, mem <= p.recycle)
	return resp, nil
}

// run is one call's protocol (wasm/README.md, "ABI"): buffer, only when the
// request is longer than the capacity the slot knows (or the instance is
// new); write the request; call; copy the answer out, appended to dst. A
// panic of the engine's host code is an error of the stage it happened in.
func run(s *slot, c abi.Call, dst, request []byte) (resp []byte, stage string, err error) {
	stage = "buffer"
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the host panicked: %v", r)
		}
	}()
	size := uint32(len(request))
	if !s.sized || size > s.capacity {
		if s.ptr, s.capacity, err = s.inst.Buffer(size); err != nil {
			s.sized = false
			return nil, stage, err
		}
		s.sized = true
		if size > s.capacity {
			return nil, stage, fmt.Errorf("the request buffer holds %d bytes, not the %d asked for", s.capacity, size)
		}
	}
	stage = "write"
	if err := s.inst.Write(s.ptr, request); err != nil {
		return nil, stage, err
	}
	stage = c.Name()
	packed, err := s.inst.Call(c, size)
	if err != nil {
		return nil, stage, err
	}
	stage = "read"
	view, err := s.inst.Read(uint32(packed>>32), uint32(packed))
	if err != nil {
		return nil, stage, err
	}
	return append(dst, view...), stage, nil
}

// classify turns an engine error into the host-independent failure: out of
// memory when the module's Go runtime said so (memory.grow failed, or the
// limit was hit), else a trap. Detail keeps the engine's first line, the
// trap, and the module's stderr.
func classify(engine, stage string, err error, stderr string) *Failure {
	msg := abi.MsgTrapped
	if strings.Contains(stderr, abi.StderrOutOfMemory) || strings.Contains(err.Error(), "out of memory") {
		msg = abi.MsgOutOfMemory
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
func (p *Pool) get() (*slot, error) {
	p.tokens <- struct{}{}
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		s := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return s, nil
	}
	p.mu.Unlock()
	inst, err := p.engine.NewInstance()
	if err != nil {
		<-p.tokens
		return nil, err
	}
	return &slot{inst: inst}, nil
}

// put returns s to the idle list (or closes its instance) and frees its
// slot.
func (p *Pool) put(s *slot, keep bool) {
	if keep {
		p.mu.Lock()
		p.idle = append(p.idle, s)
		p.mu.Unlock()
	} else {
		s.inst.Close()
	}
	<-p.tokens
}

// Warm makes sure one instance is ready.
func (p *Pool) Warm() error {
	s, err := p.get()
	if err != nil {
		return err
	}
	p.put(s, true)
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
		for _, s := range p.idle {
			s.inst.Close()
		}
		p.idle = nil
		p.mu.Unlock()
		err = p.engine.Close()
	})
	return err
}

// StderrBuffer keeps the first abi.StderrKeep bytes written to it; engines give
// it to the module as its stderr.
type StderrBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *StderrBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := abi.StderrKeep - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (b *StderrBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
