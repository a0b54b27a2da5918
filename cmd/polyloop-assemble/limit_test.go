package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/limitreq"
)

// TestMain makes this test binary the command itself when
// POLYLOOP_CLI_AS_COMMAND is set, with its request limit lowered to
// POLYLOOP_CLI_TEST_LIMIT bytes: a child process whose memory a test bounds.
// The built command has no such switch.
func TestMain(m *testing.M) {
	if os.Getenv("POLYLOOP_CLI_AS_COMMAND") == "1" {
		if n, err := strconv.ParseInt(os.Getenv("POLYLOOP_CLI_TEST_LIMIT"), 10, 64); err == nil {
			requestLimit = n
		}
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

const testWasm = "../../wasm/assembly.wasm"

// cliEngines is every engine this build has (wasmtime needs cgo), with
// the flags that select it.
func cliEngines() [][]string {
	e := [][]string{{"--engine", "native"}, {"--engine", "wazero", "--wasm", testWasm}}
	if _, ok := engines["wasmtime"]; ok {
		e = append(e, []string{"--engine", "wasmtime", "--wasm", testWasm})
	}
	return e
}

const okJSON = limitreq.OKJSON

// okMsgpack is okJSON in msgpack.
var okMsgpack = core.EncodeRequest(&core.Request{ObservationTemplate: "{observation}"})

// TestReadErrorIsAnIOError: a read error (a directory given as FILE, an
// error inside a request) is reported on stderr with exit status 2 in every
// input mode and engine, and no response is made up for the bytes before
// it; the requests read whole before it are answered.
func TestReadErrorIsAnIOError(t *testing.T) {
	errDisk := errors.New("read /dev/sdz: input/output error")
	dir := t.TempDir()
	for _, eng := range cliEngines() {
		for _, in := range []string{"json", "msgpack"} {
			whole, half := []byte(okJSON+"\n"), []byte(okJSON[:20])
			if in == "msgpack" {
				whole, half = okMsgpack, okMsgpack[:10]
			}
			for _, batch := range []bool{false, true} {
				args := append([]string{"--in", in, "--out", "json"}, eng...)
				want, lines := "", 0 // the output: nothing, or in a batch the response to the whole request
				if batch {
					args = append(args, "--batch")
					want, lines = `{"v":1,"ok":true,`, 1
				}
				name := fmt.Sprintf("%v --in %s batch %v", eng[1], in, batch)
				code, out, stderr := runCLI(t, nil, append(args, dir)...)
				if code != 2 || out != "" || !strings.Contains(stderr, "is a directory") {
					t.Errorf("%s, a directory: exit %d, output %q, stderr %q; want 2, none, the error", name, code, out, stderr)
				}
				var o, e bytes.Buffer
				code = run(args, io.MultiReader(bytes.NewReader(whole), bytes.NewReader(half), iotest.ErrReader(errDisk)), &o, &e)
				if code != 2 || strings.Count(o.String(), "\n") != lines || !strings.HasPrefix(o.String(), want) ||
					strings.Contains(o.String(), "malformed_request") || !strings.Contains(e.String(), errDisk.Error()) {
					t.Errorf("%s, an error inside a request: exit %d, output %q, stderr %q; want 2, %q…, the error", name, code, o.String(), e.String(), want)
				}
			}
		}
	}
}

// withLimit lowers requestLimit for the rest of the test.
func withLimit(t *testing.T, n int64) {
	old := requestLimit
	requestLimit = n
	t.Cleanup(func() { requestLimit = old })
}

// paddedJSON is okJSON padded with spaces to n bytes: a valid request.
func paddedJSON(n int) string {
	return okJSON[:len(okJSON)-1] + strings.Repeat(" ", n-len(okJSON)) + "}"
}

// sizedMsgpack is a valid msgpack request of n bytes (a long template).
func sizedMsgpack(t *testing.T, n int) []byte {
	for k := 0; k < n; k++ {
		b := core.EncodeRequest(&core.Request{ObservationTemplate: "{observation}" + strings.Repeat("x", k)})
		if len(b) == n {
			return b
		}
	}
	t.Fatalf("no request of %d bytes", n)
	return nil
}

// checkResponses checks JSON output, one response a line: "ok" for an ok
// response, else the size of a request answered too_large at "" with the
// core's message for that size.
func checkResponses(t *testing.T, name, out string, want []any) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%s: %d responses, want %d:\n%.2000s", name, len(lines), len(want), out)
	}
	for i, w := range want {
		var r struct {
			OK    bool
			Error struct{ Code, Message, Path string }
		}
		if err := json.Unmarshal([]byte(lines[i]), &r); err != nil {
			t.Fatalf("%s: response %d is not JSON: %v", name, i+1, err)
		}
		if w == "ok" && !r.OK {
			t.Errorf("%s: response %d is not ok: %s", name, i+1, lines[i])
		}
		if size, ok := w.(int64); ok && (r.Error.Code != "too_large" || r.Error.Path != "" || r.Error.Message != fmt.Sprintf(core.MsgRequestTooLargeFormat, size)) {
			t.Errorf("%s: response %d is %s; want too_large for %d bytes", name, i+1, lines[i], size)
		}
	}
}

// TestBatchOverLimitResyncs: at a lowered limit, a request of exactly the
// limit is answered; one byte more is too_large with its size, and the next
// request is answered (JSON: the next line; msgpack: the next value after
// the long one's headers), a last request cut short and over the limit too.
func TestBatchOverLimitResyncs(t *testing.T) {
	const limit = 1000
	withLimit(t, limit)
	jsonIn := paddedJSON(limit) + "\n" + paddedJSON(limit+1) + "\n" + okJSON + "\n" + strings.Repeat("[", 5000) + "\n" + okJSON + "\n" + paddedJSON(1200)
	jsonWant := []any{"ok", int64(limit + 1), "ok", int64(5000), "ok", int64(1200)}
	var mp bytes.Buffer
	mp.Write(okMsgpack)
	n, _ := limitreq.LongMsgpackArray(&mp, 20, 100)
	mp.Write(okMsgpack)
	mp.Write(sizedMsgpack(t, limit))
	mp.Write([]byte{0xdb, 0x40, 0, 0, 0}) // a str of 1 GiB, cut after 2000 bytes
	mp.Write(bytes.Repeat([]byte{'s'}, 2000))
	mpWant := []any{"ok", n, "ok", "ok", int64(2005)}
	for _, eng := range cliEngines() {
		code, out, stderr := runCLI(t, []byte(jsonIn), append([]string{"--batch", "--jobs", "2"}, eng...)...)
		if code != 1 {
			t.Errorf("%s json: exit %d, want 1 (%s)", eng[1], code, stderr)
		}
		checkResponses(t, eng[1]+" json", out, jsonWant)
		code, out, stderr = runCLI(t, mp.Bytes(), append([]string{"--batch", "--jobs", "2", "--in", "msgpack"}, eng...)...)
		if code != 1 {
			t.Errorf("%s msgpack: exit %d, want 1 (%s)", eng[1], code, stderr)
		}
		checkResponses(t, eng[1]+" msgpack", out, mpWant)
	}
}

// TestOneRequestOverLimit: one request (not --batch) over the lowered
// limit, from stdin or a file, is too_large with its size (exit 1); one of
// exactly the limit is answered.
func TestOneRequestOverLimit(t *testing.T) {
	const limit = 1000
	withLimit(t, limit)
	file := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(file, []byte(paddedJSON(limit+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		stdin []byte
		args  []string
		want  any
	}{
		{"json at the limit", []byte(paddedJSON(limit)), nil, "ok"},
		{"json over it", []byte(paddedJSON(limit + 1)), nil, int64(limit + 1)},
		{"json file over it", nil, []string{file}, int64(limit + 1)},
		{"msgpack at the limit", sizedMsgpack(t, limit), []string{"--in", "msgpack"}, "ok"},
		{"msgpack over it", sizedMsgpack(t, 3*limit), []string{"--in", "msgpack"}, int64(3 * limit)},
	} {
		code, out, stderr := runCLI(t, tc.stdin, tc.args...)
		if wantCode := map[bool]int{true: 0, false: 1}[tc.want == "ok"]; code != wantCode {
			t.Errorf("%s: exit %d, want %d (%s)", tc.name, code, wantCode, stderr)
		}
		checkResponses(t, tc.name, out, []any{tc.want})
	}
}

// memoryLimitKB bounds the native child's address space (ulimit -v): room
// for the command (the Go runtime reserves some 800 MB of it at start; at
// 1.2 GB it fails to start at all), less than the 2 GiB request it must not
// hold. The wasm engines reserve the module's 4 GiB and cannot run under
// one: their peak RSS is the bound.
const memoryLimitKB = 1_600_000

// runChild runs this test binary as the command on eng with its request
// limit at limit bytes and its stdin written by feed; native under the
// address-space limit.
func runChild(t *testing.T, limit int64, eng, args []string, feed func(io.Writer) error) limitreq.Run {
	t.Helper()
	kb := 0
	if eng[1] == "native" {
		kb = memoryLimitKB
	}
	env := []string{"POLYLOOP_CLI_AS_COMMAND=1", "POLYLOOP_CLI_TEST_LIMIT=" + strconv.FormatInt(limit, 10)}
	r, err := limitreq.RunBounded(append(append([]string{os.Args[0]}, eng...), args...), env, kb, feed)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestBatchOverLimitInBoundedMemory: a batch whose middle request is far
// over the 1 MiB test limit (a JSON line; a msgpack array32 of 1 MiB bins)
// is read past in bounded memory: native, 2 GiB, under an address-space
// limit smaller than the request; every engine (512 MiB on the wasm ones)
// with a peak RSS far below it. The request is too_large with its size and
// the next one is answered.
func TestBatchOverLimitInBoundedMemory(t *testing.T) {
	if _, err := os.Stat(limitreq.GNUTime); err != nil {
		t.Skip("needs GNU time to measure the peak RSS")
	}
	const maxRSSKB = 256 << 10
	for _, eng := range cliEngines() {
		mib := 512 // of the long request
		if eng[1] == "native" {
			mib = 2048
		}
		var size int64
		r := runChild(t, 1<<20, eng, []string{"--batch", "--jobs", "2"}, func(w io.Writer) (err error) {
			fmt.Fprintln(w, okJSON)
			if size, err = limitreq.LongJSONLine(w, mib); err == nil {
				_, err = fmt.Fprintln(w, okJSON)
			}
			return err
		})
		checkChild(t, eng[1]+" json", r, maxRSSKB, []any{"ok", size, "ok"})
		r = runChild(t, 1<<20, eng, []string{"--batch", "--jobs", "2", "--in", "msgpack"}, func(w io.Writer) (err error) {
			w.Write(okMsgpack)
			if size, err = limitreq.LongMsgpackArray(w, mib, 1<<20); err == nil {
				_, err = w.Write(okMsgpack)
			}
			return err
		})
		checkChild(t, eng[1]+" msgpack", r, maxRSSKB, []any{"ok", size, "ok"})
	}
}

func checkChild(t *testing.T, name string, r limitreq.Run, maxKB int64, want []any) {
	t.Helper()
	t.Logf("%s: %v", name, r)
	if r.Code != 1 || r.Crashed() {
		t.Fatalf("%s: exit %d, want 1; stderr %.1000s", name, r.Code, r.Stderr)
	}
	if r.RSSKB <= 0 || r.RSSKB > maxKB {
		t.Errorf("%s: peak RSS %d KB, want 1..%d KB", name, r.RSSKB, maxKB)
	}
	checkResponses(t, name, r.Stdout, want)
}

// TestJSONFileOver4GiBIsTooLarge: a JSON file of 4 GiB (sparse), at the
// real 1 GiB limit, is too_large with its size on every engine, in bounded
// memory: it is not read (native under the address-space limit).
func TestJSONFileOver4GiBIsTooLarge(t *testing.T) {
	if _, err := os.Stat(limitreq.GNUTime); err != nil {
		t.Skip("needs GNU time to measure the peak RSS")
	}
	file := filepath.Join(t.TempDir(), "huge.json")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, 1<<32); err != nil {
		t.Fatal(err)
	}
	for _, eng := range cliEngines() {
		r := runChild(t, core.MaxRequestBytes, eng, []string{file}, func(io.Writer) error { return nil })
		checkChild(t, eng[1]+" json", r, 256<<10, []any{int64(1 << 32)})
	}
}
