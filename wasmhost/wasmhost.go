// Package wasmhost runs the assembly core's WebAssembly module
// (wasm/assembly.wasm, built by `make wasm`) in a sandbox, with the same API as
// the native core: AssembleBytes, Assemble, ValidateTemplate, NewPrompt and
// AddStepBytes, and AssembleJSON for a request written as JSON text. Each
// forwards to AppendCall, which runs any call of the contract's table
// (core/abi: abi.Calls).
//
// New runs it under wazero (pure Go: this package builds with CGO_ENABLED=0).
// The wasmtime engine lives in the subpackage wasmhost/wasmtime, the only
// package that imports wasmtime-go (cgo); both return this package's Runner.
//
// A Runner is safe for concurrent use: it runs each call on one of at most
// Options.MaxInstances instances (a call waits while all are busy). A call
// costs one call into the module: the request is copied into the module's
// request buffer, its call export runs, the answer is copied out (no buffer
// allocated or freed per call; wasm/README.md, "ABI"). An instance whose
// linear memory grew past Options.RecycleAboveBytes is discarded after its
// call (linear memory never shrinks); an instance that trapped, exited or
// ran out of memory is discarded and the call answers an internal error
// whose message is the same on every host (the engine's own words are in
// core.Error.Detail); the next call gets a fresh instance.
//
// The module gets no preopened directory, environment or arguments; its
// stdout goes nowhere and its stderr (the Go runtime's fatal errors) into the
// Detail of a failed call; it gets the system clocks, which the Go runtime
// inside it needs for its scheduler and garbage collector.
package wasmhost

import (
	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/internal/engine"
	"github.com/tinylib/msgp/msgp"
)

// Options configures a Runner. The zero value is usable. The names and
// meanings are the same in the Python (max_instances, recycle_above_bytes,
// memory_limit_bytes, cache_dir) and JS (maxInstances, recycleAboveBytes,
// memoryLimitBytes) bindings.
type Options struct {
	// Module is the module's bytes. When nil, ModulePath is read.
	Module []byte
	// ModulePath is where the module is read from when Module is nil.
	// Default: $POLYLOOP_ASSEMBLY_WASM, else wasm/assembly.wasm found from
	// the working directory upwards. A missing module is ErrNoModule.
	ModulePath string
	// CacheDir is where compiled code is cached. Default:
	// $POLYLOOP_ASSEMBLY_CACHE_DIR, else the user cache directory
	// (os.UserCacheDir)/polyloop-assembly; "-" disables the disk cache.
	// Layout (shared with the Python binding): <dir>/wazero/ (wazero's own
	// cache) and <dir>/wasmtime-<version>/<module sha256>.cwasm (the 4 newest
	// kept), each compiled under a file lock so that processes starting
	// together on a cold cache compile once. An unusable directory falls
	// back to compiling in memory; so does one that another user owns or
	// may write, with one notice on stderr (docs/SPEC.md §7.4: the seal
	// of a cached file is not a signature). Only regular files are read.
	CacheDir string
	// MaxInstances is the most instances alive at once; a call waits while
	// all are busy. Default: the number of CPUs.
	MaxInstances int
	// RecycleAboveBytes: an instance whose linear memory exceeds this after
	// a call is discarded. Default 256 MiB.
	RecycleAboveBytes uint64
	// MemoryLimitBytes caps one instance's linear memory; a call that needs
	// more fails with an internal error (out of memory). Default 4 GiB, the
	// wasm32 maximum.
	MemoryLimitBytes uint64
}

func (o Options) config() engine.Config {
	return engine.Config{
		Module: o.Module, ModulePath: o.ModulePath, CacheDir: o.CacheDir,
		MaxInstances: o.MaxInstances, MemoryLimitBytes: o.MemoryLimitBytes, RecycleAboveBytes: o.RecycleAboveBytes,
	}
}

// ErrNoModule is the error (wrapped) of New when the module file is not
// found: build it with `make wasm`, or give Options.ModulePath.
var ErrNoModule = engine.ErrNoModule

// Runner runs the module on a pool of instances.
type Runner struct {
	pool *engine.Pool
}

// New returns a Runner of the module under wazero.
func New(opts Options) (*Runner, error) {
	return NewWithEngine(opts, engine.OpenWazero)
}

// NewWithEngine returns a Runner of the module on the engine that open
// opens from opts: the constructor of wasmhost/wasmtime's Runner, which
// keeps the one package that needs cgo apart while the Runner stays this
// package's. open's types are internal/engine's, so only the engines of
// this module can give one.
func NewWithEngine(opts Options, open func(engine.Config) (engine.Engine, error)) (*Runner, error) {
	c := opts.config()
	e, err := open(c)
	if err != nil {
		return nil, err
	}
	return &Runner{pool: engine.NewPool(e, c)}, nil
}

// Engine names the engine: "wazero" or "wasmtime".
func (r *Runner) Engine() string { return r.pool.Name() }

// AppendCall runs call c of the module (abi.Calls) on request and appends
// its answer to dst, the bytes the module answers (and the same as
// dispatch.Append's, the functions it runs). It always answers: a failure of
// the sandbox (a trap, memory exhausted) or an answer that is not one of c
// is an internal error in the shape of c's answer (core.AppendErrorAnswer).
// A request over c's limit (requestLimit) is not copied into the module:
// the module's error call answers it too_large, as in Python and JS.
// request must not overlap dst's spare capacity.
func (r *Runner) AppendCall(c abi.Call, dst, request []byte) []byte {
	ans, fail := r.call(c, dst, request)
	if fail != nil {
		return core.AppendErrorAnswer(dst, c, fail)
	}
	return ans
}

// AssembleBytes is core.AssembleBytes run inside the module (its assemble
// call). It always returns a response; a failure of the sandbox (a trap,
// memory exhausted) is an error response with code internal (Assemble
// gives its Detail too).
func (r *Runner) AssembleBytes(request []byte) []byte {
	return r.AppendCall(abi.CallAssemble, nil, request)
}

// AppendAssembleBytes is AssembleBytes that appends the response to dst and
// returns the extended slice, as core.AppendAssembleBytes: a caller that
// reuses one buffer across calls spares the Go heap a fresh response per
// call, which for large responses is most of the host's cost (a fresh
// 1.1 MB costs the Go heap 0.1-0.5 ms when its pages were returned to the
// system; BENCHMARKS.md has both). request must not overlap dst's spare
// capacity.
func (r *Runner) AppendAssembleBytes(dst, request []byte) []byte {
	return r.AppendCall(abi.CallAssemble, dst, request)
}

// AddStepBytes is core.AddStepBytes run inside the module (its add_step
// call): an add_step request in, its response out (docs/SPEC.md §7.3.1).
// Like AssembleBytes it always returns a response.
func (r *Runner) AddStepBytes(request []byte) []byte {
	return r.AppendCall(abi.CallAddStep, nil, request)
}

// AssembleJSON answers a request written as JSON text (UTF-8) inside the
// module (its assemble_json call): the same verdict on JSON text as the
// command-line tool and every other host (a syntax error is
// malformed_request at "" with the byte offset in the message), and the
// same response bytes as AssembleBytes of the equivalent msgpack.
func (r *Runner) AssembleJSON(text []byte) []byte {
	return r.AppendCall(abi.CallAssembleJSON, nil, text)
}

// AssembleView is core.AppendAssembleViewBytes run inside the module (its
// assemble_view call, docs/SPEC.md §7.8): the response with its view, as
// core.SplitViewAnswer reads it. A failure of the sandbox is the view answer
// of an internal error.
func (r *Runner) AssembleView(request []byte) []byte {
	return r.AppendCall(abi.CallAssembleView, nil, request)
}

// AssembleViewJSON is AssembleView for a request written as JSON text (its
// assemble_view_json call).
func (r *Runner) AssembleViewJSON(text []byte) []byte {
	return r.AppendCall(abi.CallAssembleViewJSON, nil, text)
}

// CallArgs runs call c, whose request is a map of its arguments
// (abi.Spec.Params), on args (each msgpack, in the order of Params) and
// returns its answer, as AppendCall does: the generic call a facade
// forwards to. A wrong number of arguments is answered, in the shape of
// c's answer, with core.AppendArgs's malformed_request (never a panic).
func (r *Runner) CallArgs(c abi.Call, args ...[]byte) []byte {
	req, err := core.AppendArgs(nil, c, args...)
	if err != nil {
		return core.AppendErrorAnswer(nil, c, err)
	}
	return r.AppendCall(c, nil, req)
}

// Compare compares two prompts inside the module (docs/SPEC.md §7.9):
// each side the msgpack of a request, of a recorded message list, or
// either as JSON text in a str. The answer is the comparison's JSON text,
// or {"error": …}.
func (r *Runner) Compare(a, b []byte) []byte { return r.CallArgs(abi.CallCompare, a, b) }

// call runs call c and appends its answer to dst; a failure is the
// internal error to answer.
func (r *Runner) call(c abi.Call, dst, request []byte) ([]byte, *core.Error) {
	op := c
	if len(request) > requestLimit(c) {
		op, request = abi.CallError, tooLarge(c, len(request))
	}
	out, f := r.pool.CallAppend(op, dst, request)
	switch {
	case f != nil:
		return nil, &core.Error{Code: core.CodeInternal, Message: f.Message, Detail: f.Detail, Offset: -1}
	case !core.IsAnswer(c, out[len(dst):]):
		return nil, &core.Error{Code: core.CodeInternal, Message: abi.MsgBadResponse, Detail: r.Engine() + ": " + describe(out[len(dst):]), Offset: -1}
	}
	return out, nil
}

// requestLimit is the most bytes call c is handed, as in Python and JS: a
// msgpack request past abi.MaxRequestBytes is too_large without being
// copied in (the core would refuse it before decoding); anything else (JSON
// text, arguments) up to the module's 32-bit buffer, for the core to judge.
func requestLimit(c abi.Call) int {
	switch abi.Calls[c.Base()].Arg {
	case abi.ArgRequest, abi.ArgAddStep:
		return abi.MaxRequestBytes
	}
	return abi.MaxModuleBufferBytes
}

// tooLarge is the error call's request (docs/SPEC.md §7.10) that asks the
// core for call c's too_large answer to a request of size bytes.
func tooLarge(c abi.Call, size int) []byte {
	b := msgp.AppendMapHeader(nil, 3)
	b = msgp.AppendUint32(msgp.AppendString(b, "call"), uint32(c.Base()))
	b = msgp.AppendString(msgp.AppendString(b, "error"), "too_large")
	return msgp.AppendInt(msgp.AppendString(b, "size"), size)
}

func describe(b []byte) string {
	const show = 32
	if len(b) > show {
		return "the first bytes are " + hexBytes(b[:show]) + "…"
	}
	return "the bytes are " + hexBytes(b)
}

func hexBytes(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// PeakMemoryBytes is the largest linear memory of an instance of this runner
// after a call: the memory one instance needs for the largest request it has
// answered (linear memory never shrinks).
func (r *Runner) PeakMemoryBytes() uint64 { return r.pool.PeakMemoryBytes() }

// Warm makes sure at least one instance is ready, so that the first call
// does not pay for instantiation.
func (r *Runner) Warm() error { return r.pool.Warm() }

// Instantiate creates one instance and closes it again: a health check of
// the module and the engine, and what benchmarks time as instantiation.
func (r *Runner) Instantiate() error { return r.pool.Instantiate() }

// Close releases every idle instance and the engine. Calls must not be in
// flight.
func (r *Runner) Close() error { return r.pool.Close() }

// Assemble is core.Assemble run inside the module: the request's canonical
// encoding through the module's wire function, so the response and every
// error (code, path, message, offset) are core.Assemble's.
func (r *Runner) Assemble(req *core.Request) (*core.Response, error) {
	if req == nil {
		return core.Assemble(nil) // nothing to encode: core's own error for it
	}
	resp, fail := r.call(abi.CallAssemble, nil, core.EncodeRequest(req))
	if fail != nil {
		return nil, fail
	}
	return core.DecodeResponse(resp)
}

// ValidateTemplate is core.ValidateTemplate run inside the module: it
// assembles a request holding only the template, as core.ValidateTemplate
// does (the error's path is observation_template).
func (r *Runner) ValidateTemplate(t string) error {
	_, err := r.Assemble(&core.Request{ObservationTemplate: t})
	return err
}
