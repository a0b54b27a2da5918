package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/polyloop/assembly/core"
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

const okJSON = `{"observation_template": "{observation}"}`

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

// bigArray is an array32 of n bin32 values of size bytes each: its headers
// say its length, size*n + 5*(n+1) bytes.
func bigArray(w io.Writer, n, size int) (int64, error) {
	hdr := func(c byte, k int) []byte { return []byte{c, byte(k >> 24), byte(k >> 16), byte(k >> 8), byte(k)} }
	if _, err := w.Write(hdr(0xdd, n)); err != nil {
		return 0, err
	}
	payload := make([]byte, size)
	for range n {
		if _, err := w.Write(hdr(0xc6, size)); err != nil {
			return 0, err
		}
		if _, err := w.Write(payload); err != nil {
			return 0, err
		}
	}
	return int64(size*n + 5*(n+1)), nil
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
	n, _ := bigArray(&mp, 20, 100)
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
// hold.
const memoryLimitKB = 1_600_000

// runChild runs this test binary as the command with its request limit at
// 1 MiB (runChildAt: at another), its stdin written by feed, under the address-space limit for
// native (the wasm engines reserve the module's 4 GiB and cannot run under
// one), its peak RSS measured by GNU time.
func runChild(t *testing.T, eng, args []string, feed func(io.Writer) error) (code int, out, stderr string, rssKB int64) {
	return runChildAt(t, 1<<20, eng, args, feed)
}

// runChildAt is runChild with the request limit at limit bytes.
func runChildAt(t *testing.T, limit int64, eng, args []string, feed func(io.Writer) error) (code int, out, stderr string, rssKB int64) {
	t.Helper()
	rss := filepath.Join(t.TempDir(), "rss")
	argv := append(append([]string{"/usr/bin/time", "-f", "%M", "-o", rss, os.Args[0]}, eng...), args...)
	if eng[1] == "native" {
		argv = append([]string{"bash", "-c", `ulimit -v ` + strconv.Itoa(memoryLimitKB) + ` && exec "$@"`, "bash"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "POLYLOOP_CLI_AS_COMMAND=1", "POLYLOOP_CLI_TEST_LIMIT="+strconv.FormatInt(limit, 10))
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	w, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	ferr := feed(bw)
	if ferr == nil {
		ferr = bw.Flush()
	}
	w.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if ferr != nil {
		t.Logf("%s: writing the input: %v", eng[1], ferr)
	}
	b, _ := os.ReadFile(rss)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	rssKB, _ = strconv.ParseInt(lines[len(lines)-1], 10, 64)
	return cmd.ProcessState.ExitCode(), o.String(), e.String(), rssKB
}

// TestBatchOverLimitInBoundedMemory: a batch whose middle request is far
// over the 1 MiB test limit (a JSON line; a msgpack array32 of 1 MiB bins)
// is read past in bounded memory: native, 2 GiB, under an address-space
// limit smaller than the request; every engine (512 MiB on the wasm ones)
// with a peak RSS far below it. The request is too_large with its size and
// the next one is answered.
func TestBatchOverLimitInBoundedMemory(t *testing.T) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		t.Skip("needs GNU time (/usr/bin/time) to measure the peak RSS")
	}
	const maxRSSKB = 256 << 10
	head := `{"observation_template": "{observation}", "steps": [{"raw_output": "`
	tail := `", "observation": ""}]}`
	for _, eng := range cliEngines() {
		mib := 512 // of the long request
		if eng[1] == "native" {
			mib = 2048
		}
		code, out, stderr, rss := runChild(t, eng, []string{"--batch", "--jobs", "2"}, func(w io.Writer) error {
			chunk := bytes.Repeat([]byte{'a'}, 1<<20)
			fmt.Fprintf(w, "%s\n%s", okJSON, head)
			for range mib {
				if _, err := w.Write(chunk); err != nil {
					return err
				}
			}
			_, err := fmt.Fprintf(w, "%s\n%s\n", tail, okJSON)
			return err
		})
		checkChild(t, eng[1]+" json", code, out, stderr, rss, maxRSSKB, []any{"ok", int64(len(head) + mib<<20 + len(tail)), "ok"})
		var size int64
		code, out, stderr, rss = runChild(t, eng, []string{"--batch", "--jobs", "2", "--in", "msgpack"}, func(w io.Writer) error {
			w.Write(okMsgpack)
			n, err := bigArray(w, mib, 1<<20)
			size = n
			if err == nil {
				_, err = w.Write(okMsgpack)
			}
			return err
		})
		checkChild(t, eng[1]+" msgpack", code, out, stderr, rss, maxRSSKB, []any{"ok", size, "ok"})
	}
}

func checkChild(t *testing.T, name string, code int, out, stderr string, rssKB, maxKB int64, want []any) {
	t.Helper()
	t.Logf("%s: exit %d, peak RSS %d MB", name, code, rssKB>>10)
	if code != 1 || strings.Contains(stderr, "fatal error") || strings.Contains(stderr, "goroutine") {
		t.Fatalf("%s: exit %d, want 1; stderr %.1000s", name, code, stderr)
	}
	if rssKB <= 0 || rssKB > maxKB {
		t.Errorf("%s: peak RSS %d KB, want 1..%d KB", name, rssKB, maxKB)
	}
	checkResponses(t, name, out, want)
}

// TestJSONFileOver4GiBIsTooLarge: a JSON file of 4 GiB (sparse), at the
// real 1 GiB limit, is too_large with its size on every engine, in bounded
// memory: it is not read (native under the address-space limit).
func TestJSONFileOver4GiBIsTooLarge(t *testing.T) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		t.Skip("needs GNU time (/usr/bin/time) to measure the peak RSS")
	}
	file := filepath.Join(t.TempDir(), "huge.json")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, 1<<32); err != nil {
		t.Fatal(err)
	}
	for _, eng := range cliEngines() {
		code, out, stderr, rss := runChildAt(t, core.MaxRequestBytes, eng, []string{file}, func(io.Writer) error { return nil })
		checkChild(t, eng[1]+" json", code, out, stderr, rss, 256<<10, []any{int64(1 << 32)})
	}
}
