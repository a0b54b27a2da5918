package engine

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polyloop/assembly/core/abi"
)

// fake is an engine whose instances echo the request, and count how many are
// alive at once and how often buffer was called.
type fake struct {
	alive, most atomic.Int64
	buffers     atomic.Int64
	fail        func(req []byte) (string, error) // the module's stderr and a call error
}

type fakeInstance struct {
	e      *fake
	mem    []byte
	stderr string
	closed bool
}

func (e *fake) Name() string { return "fake" }
func (e *fake) NewInstance() (Instance, error) {
	n := e.alive.Add(1)
	for {
		m := e.most.Load()
		if n <= m || e.most.CompareAndSwap(m, n) {
			break
		}
	}
	return &fakeInstance{e: e, mem: make([]byte, 1<<16)}, nil
}
func (e *fake) Close() error { return nil }

// Buffer grows the request buffer (at address 0, all of memory) to size.
func (i *fakeInstance) Buffer(size uint32) (uint32, uint32, error) {
	i.e.buffers.Add(1)
	if int(size) > len(i.mem) {
		i.mem = append(i.mem, make([]byte, int(size)-len(i.mem))...)
	}
	return 0, uint32(len(i.mem)), nil
}
func (i *fakeInstance) Call(op abi.Call, size uint32) (uint64, error) {
	time.Sleep(time.Millisecond) // a call takes a while: callers overlap
	if i.e.fail != nil {
		if stderr, err := i.e.fail(i.mem[:size]); err != nil {
			i.stderr = stderr
			return 0, err
		}
	}
	return uint64(size), nil
}
func (i *fakeInstance) Write(ptr uint32, b []byte) error { copy(i.mem[ptr:], b); return nil }
func (i *fakeInstance) Read(ptr, size uint32) ([]byte, error) {
	return i.mem[ptr : ptr+size], nil
}
func (i *fakeInstance) MemorySize() uint64 { return uint64(len(i.mem)) }
func (i *fakeInstance) Stderr() string     { return i.stderr }
func (i *fakeInstance) Close() {
	if !i.closed {
		i.closed = true
		i.e.alive.Add(-1)
	}
}

// TestMaxInstancesIsTheMostAlive: 64 concurrent calls on MaxInstances 3 never
// have more than 3 instances alive; every call is answered (calls wait).
func TestMaxInstancesIsTheMostAlive(t *testing.T) {
	e := &fake{}
	p := NewPool(e, Config{MaxInstances: 3})
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := []byte{byte(i)}
			resp, f := p.Call(abi.CallAssemble, req)
			if f != nil || len(resp) != 1 || resp[0] != byte(i) {
				t.Errorf("call %d: %v %v", i, resp, f)
			}
		}()
	}
	wg.Wait()
	if m := e.most.Load(); m > 3 || m < 2 {
		t.Fatalf("%d instances alive at once with MaxInstances 3", m)
	}
	p.Close()
	if a := e.alive.Load(); a != 0 {
		t.Fatalf("%d instances alive after Close", a)
	}
}

// TestBufferOnlyWhenLonger: an instance's buffer export is called once, and
// again only for a request longer than the capacity it answered
// (wasm/README.md, "ABI"); every request is answered whole.
func TestBufferOnlyWhenLonger(t *testing.T) {
	e := &fake{}
	p := NewPool(e, Config{MaxInstances: 1})
	defer p.Close()
	for _, tc := range []struct{ size, buffers int }{
		{0, 1}, {1, 1}, {100, 1}, {1 << 16, 1}, {1<<16 + 1, 2}, {1<<16 + 1, 2}, {10, 2}, {1 << 17, 3},
	} {
		req := make([]byte, tc.size)
		for j := range req {
			req[j] = byte(j*7 + tc.size)
		}
		resp, f := p.Call(abi.CallAssemble, req)
		if f != nil || string(resp) != string(req) {
			t.Fatalf("a request of %d bytes: got %d bytes (%v)", tc.size, len(resp), f)
		}
		if n := e.buffers.Load(); n != int64(tc.buffers) {
			t.Fatalf("after a request of %d bytes: buffer called %d times, want %d", tc.size, n, tc.buffers)
		}
	}
}

// TestFailureMessages: a failed call gets the host-independent message of its
// kind, the engine's words go to Detail, and the instance is discarded.
func TestFailureMessages(t *testing.T) {
	e := &fake{fail: func(req []byte) (string, error) {
		switch string(req) {
		case "oom":
			return "runtime: out of memory: cannot allocate 84410368-byte block\nfatal error: out of memory\n", errors.New("wasm error: unreachable\nwasm stack trace: ...")
		case "trap":
			return "panic: runtime error\n", errors.New("wasm error: integer divide by zero\nwasm stack trace: ...")
		}
		return "", nil
	}}
	p := NewPool(e, Config{MaxInstances: 1})
	for _, tc := range []struct{ req, msg, detail string }{
		{"oom", abi.MsgOutOfMemory, "fatal error: out of memory"},
		{"trap", abi.MsgTrapped, "integer divide by zero"},
	} {
		_, f := p.Call(abi.CallAssemble, []byte(tc.req))
		if f == nil || f.Message != tc.msg {
			t.Fatalf("%s: got %+v, want the message %q", tc.req, f, tc.msg)
		}
		if !strings.Contains(f.Detail, tc.detail) || !strings.Contains(f.Detail, "fake: assemble failed") {
			t.Fatalf("%s: detail %q lacks %q", tc.req, f.Detail, tc.detail)
		}
		if e.alive.Load() != 0 {
			t.Fatalf("%s: the failed instance was kept", tc.req)
		}
	}
	if resp, f := p.Call(abi.CallAssemble, []byte("ok")); f != nil || string(resp) != "ok" {
		t.Fatalf("the call after failures: %q %v", resp, f)
	}
}

// TestStderrKeepsTheHead: the module's stderr is kept as every host keeps it
// (docs/SPEC.md §7.5), its first abi.StderrKeep bytes, so the Go runtime's reason
// survives however long the goroutine traces after it.
func TestStderrKeepsTheHead(t *testing.T) {
	var b StderrBuffer
	b.Write([]byte("runtime: out of memory: cannot allocate 8192-byte block\nfatal error: out of memory\n\n"))
	for k := range 400 {
		fmt.Fprintf(&b, "goroutine %d [running]:\nmain.f(0x%x)\n\t/src/x.go:%d +0x1f\n", k, k, k)
	}
	s := b.String()
	if len(s) != abi.StderrKeep || !strings.HasPrefix(s, "runtime: out of memory") || strings.Contains(s, "goroutine 399") {
		t.Fatalf("kept %d bytes: %.80q … %q", len(s), s, s[max(0, len(s)-40):])
	}
	if f := classify("fake", "assemble", errors.New("wasm error: unreachable"), s); f.Message != abi.MsgOutOfMemory {
		t.Fatalf("classified %q", f.Message)
	}
}
