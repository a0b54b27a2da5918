package wasmtime

// One cgo call per request: the module's buffer and call exports are called
// through the C API's wasmtime_func_call_unchecked, from a small C function
// that also reads linear memory's base and size after the call, so that
// writing the request and reading the answer need no cgo call at all.
// Func.Call costs about ten cgo calls (the function's type, each argument,
// the store's context and data, the results) and Memory.UnsafeData four: a
// request made 42 before (counted with runtime.NumCgoCall).
//
// The prototypes below are the C API's (wasmtime/func.h, wasmtime/memory.h,
// wasmtime/error.h, wasm.h of the wasmtime-go release in Version), declared
// here rather than included: the headers sit in wasmtime-go's module
// directory, which no #cgo CFLAGS of this package can name portably. The
// symbols come from the static library wasmtime-go links.
//
// What this file takes from wasmtime-go's internals, and the checks that
// fail loudly when a wasmtime-go release changes them (checkLayout at
// open, and the tests comparing these calls with Func.Call):
//   - Store.Context() is the store's wasmtime_context_t (public; a pointer
//     into the boxed store, stable for its life).
//   - wt.Func and wt.Memory are structs of one field, the C API's
//     wasmtime_func_t / wasmtime_memory_t value, copied here byte for byte
//     (the C API passes them by pointer; their fields are opaque).

/*
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

typedef struct pl_context pl_context;            // wasmtime_context_t
typedef struct pl_error pl_error;                // wasmtime_error_t
typedef struct pl_trap pl_trap;                  // wasm_trap_t
typedef struct { uint64_t w[2]; } pl_func;       // wasmtime_func_t: store_id, a pointer
typedef struct { uint64_t w[3]; } pl_memory;     // wasmtime_memory_t: {store_id, u32}, u32
typedef union { int32_t i32; int64_t i64; uint64_t w[2]; } pl_val_raw; // wasmtime_val_raw_t (16 bytes)
typedef struct { size_t size; char *data; } pl_byte_vec; // wasm_byte_vec_t

extern pl_error *wasmtime_func_call_unchecked(pl_context *store, const pl_func *func,
	pl_val_raw *args_and_results, size_t args_and_results_len, pl_trap **trap);
extern uint8_t *wasmtime_memory_data(const pl_context *store, const pl_memory *memory);
extern size_t wasmtime_memory_data_size(const pl_context *store, const pl_memory *memory);
extern void wasm_trap_message(const pl_trap *trap, pl_byte_vec *out);
extern void wasm_trap_delete(pl_trap *trap);
extern void wasmtime_error_message(const pl_error *error, pl_byte_vec *out);
extern void wasmtime_error_delete(pl_error *error);
extern void wasm_byte_vec_delete(pl_byte_vec *v);

// pl_instance is one instance as the calls need it, in C memory (no Go
// pointer crosses): what to call, and what the last call left.
typedef struct {
	pl_context *ctx;
	pl_func buffer, call;
	pl_memory memory;
	pl_val_raw args[2];
	uint8_t *base; // linear memory after the last call
	size_t size;
	pl_trap *trap;   // the last call's trap, or NULL
	pl_error *error; // the last call's error, or NULL
} pl_instance;

// pl_invoke calls f (buffer when call is 0, else call) with the arguments
// a and b, and returns its i64 result; on failure trap or error is set.
static int64_t pl_invoke(pl_instance *s, int call, int32_t a, int32_t b) {
	s->args[0].w[0] = 0;
	s->args[0].w[1] = 0;
	s->args[1] = s->args[0];
	s->args[0].i32 = a;
	s->args[1].i32 = b;
	s->trap = NULL;
	s->error = wasmtime_func_call_unchecked(s->ctx, call ? &s->call : &s->buffer, s->args, 2, &s->trap);
	s->base = wasmtime_memory_data(s->ctx, &s->memory);
	s->size = wasmtime_memory_data_size(s->ctx, &s->memory);
	return s->args[0].i64;
}

// pl_message puts the message of the last call's trap, else of its error,
// into out (for wasm_byte_vec_delete) and deletes them; the length to read
// is returned: a trap's message without its terminating NUL, as
// wasmtime-go's Trap.Error and Error.Error give them.
static size_t pl_message(pl_instance *s, pl_byte_vec *out) {
	size_t n = 0;
	out->size = 0;
	out->data = NULL;
	if (s->trap != NULL) {
		wasm_trap_message(s->trap, out);
		n = out->size;
		if (n > 0 && out->data[n-1] == 0) n--;
	} else if (s->error != NULL) {
		wasmtime_error_message(s->error, out);
		n = out->size;
	}
	if (s->trap != NULL) wasm_trap_delete(s->trap);
	if (s->error != NULL) wasmtime_error_delete(s->error);
	s->trap = NULL;
	s->error = NULL;
	return n;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"unsafe"

	wt "github.com/bytecodealliance/wasmtime-go/v39"
)

// checkLayout fails when wt.Func or wt.Memory is not one field of the C
// value's size (a wasmtime-go release that changed them: update this file).
func checkLayout() error {
	for _, c := range []struct {
		t    reflect.Type
		size uintptr
	}{
		{reflect.TypeFor[wt.Func](), C.sizeof_pl_func},
		{reflect.TypeFor[wt.Memory](), C.sizeof_pl_memory},
	} {
		if c.t.NumField() != 1 || c.t.Size() != c.size || c.t.Align() < 8 {
			return fmt.Errorf("wasmtime: wasmtime-go's %s is not the C API's value of %d bytes (a wasmtime-go other than %s? see wasmhost/wasmtime/unchecked.go)", c.t, c.size, Version)
		}
	}
	return nil
}

// calls is an instance's exports as the unchecked calls make them: its
// state lives in C memory, freed by free.
type calls struct {
	c     *C.pl_instance
	store *wt.Store // kept alive while c points into it
	// What c was made of, for the tests that compare with Func.Call.
	buffer, call *wt.Func
	mem          *wt.Memory
}

// newCalls prepares the calls of buffer and call in store; mem is the
// module's memory.
func newCalls(store *wt.Store, buffer, call *wt.Func, mem *wt.Memory) calls {
	c := (*C.pl_instance)(C.calloc(1, C.sizeof_pl_instance))
	c.ctx = (*C.pl_context)(unsafe.Pointer(store.Context()))
	c.buffer = *(*C.pl_func)(unsafe.Pointer(buffer))
	c.call = *(*C.pl_func)(unsafe.Pointer(call))
	c.memory = *(*C.pl_memory)(unsafe.Pointer(mem))
	data := mem.UnsafeData(store)
	c.base, c.size = (*C.uint8_t)(unsafe.SliceData(data)), C.size_t(len(data))
	return calls{c: c, store: store, buffer: buffer, call: call, mem: mem}
}

// invoke calls buffer(a) (call false) or call(a, b): one cgo call. A trap or
// error is returned with the message wasmtime-go's Func.Call gives it.
func (k calls) invoke(call bool, a, b uint32) (uint64, error) {
	var which C.int
	if call {
		which = 1
	}
	r := C.pl_invoke(k.c, which, C.int32_t(a), C.int32_t(b))
	runtime.KeepAlive(k.store)
	if k.c.trap == nil && k.c.error == nil {
		return uint64(r), nil
	}
	var msg C.pl_byte_vec
	n := C.pl_message(k.c, &msg)
	err := errors.New(C.GoStringN(msg.data, C.int(n)))
	C.wasm_byte_vec_delete(&msg)
	return 0, err
}

// memory is linear memory as the last call left it (valid until the next
// call into the instance).
func (k calls) memory() []byte {
	return unsafe.Slice((*byte)(k.c.base), int(k.c.size))
}

func (k calls) free() { C.free(unsafe.Pointer(k.c)) }
