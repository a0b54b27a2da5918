package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	assembly "github.com/polyloop/assembly"
	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/hostvec"
	"github.com/polyloop/assembly/internal/testing/randreq"
	"github.com/polyloop/assembly/internal/testing/vectors"
	"github.com/polyloop/assembly/wirejson"
)

func runCLI(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, bytes.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// jsonError runs one JSON request and returns the error code and path.
func jsonError(t *testing.T, req string) (string, string) {
	t.Helper()
	code, out, stderr := runCLI(t, []byte(req), "--in", "json", "--out", "json")
	if code != 1 {
		t.Fatalf("%s: exit %d, want 1 (stderr %q)", req, code, stderr)
	}
	var resp struct {
		OK    bool `json:"ok"`
		Error struct{ Code, Path string }
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatalf("%s: output is not JSON: %v\n%s", req, err, out)
	}
	return resp.Error.Code, resp.Error.Path
}

func TestJSONInputIsStrict(t *testing.T) {
	for _, tc := range []struct{ req, code, path string }{
		{`{"observation_template": "{observation}", "observation_template": "x{observation}"}`, "duplicate_key", "observation_template"},
		{`{"observation_template": "{observation}", "steps": [{"raw_output": "\ud800", "observation": "x"}]}`, "invalid_utf8", "steps[0].raw_output"},
		{`{"observation_template": "{observation}", "steps": [{"raw_output": "a", "observation": "\udfff\ud800"}]}`, "invalid_utf8", "steps[0].observation"},
		{"{\"observation_template\": \"{observation}\", \"injections\": {\"t\xffx\": []}}", "invalid_utf8", "injections"},
		{`{"observation_template": "{observation}", "max_prompt_chars": 10.0}`, "malformed_request", "max_prompt_chars"},
		{`{"observation_template": "{observation}", "max_prompt_chars": 1e3}`, "malformed_request", "max_prompt_chars"},
		{`{"observation_template": "{observation}", "max_prompt_chars": -1}`, "invalid_budget", "max_prompt_chars"},
		{`{"observation_template": "{observation}", "v": true}`, "malformed_request", "v"},
		{`{"observation_template": null}`, "malformed_request", "observation_template"},
		{`{"observation_template": "{observation}", "extra": 1}`, "unknown_field", "extra"},
		{`{"observation_template": "{obs}"}`, "invalid_template", "observation_template"},
		{`{"observation_template": "{observation}",}`, "malformed_request", ""},
		{`{"observation_template": "{observation}"} {}`, "malformed_request", ""},
		{`[1, 2]`, "malformed_request", ""},
	} {
		code, path := jsonError(t, tc.req)
		if code != tc.code || path != tc.path {
			t.Errorf("%s: got %s at %q, want %s at %q", tc.req, code, path, tc.code, tc.path)
		}
	}
}

func TestJSONSurrogatePairIsOneCharacter(t *testing.T) {
	code, out, _ := runCLI(t, []byte(`{"observation_template": "{observation}", "steps": [{"raw_output": "\ud83d\ude00", "observation": ""}]}`), "--out", "json")
	if code != 0 || !strings.Contains(out, `"text":"😀"`) || !strings.Contains(out, `"message_chars":[1,0]`) {
		t.Fatalf("exit %d, output %s", code, out)
	}
}

func TestJSONOutputIsNotHTMLEscaped(t *testing.T) {
	code, out, _ := runCLI(t, []byte(`{"observation_template": "{observation}", "steps": [{"raw_output": "<script>&</script>", "observation": "\u2028\u007f\u0001"}]}`), "--out", "json")
	if code != 0 || !strings.Contains(out, `<script>&</script>`) || !strings.Contains(out, "\u2028\u007f\\u0001") {
		t.Fatalf("exit %d, output %s", code, out)
	}
}

func TestExitCodesAndUsage(t *testing.T) {
	if code, _, stderr := runCLI(t, nil, "--engine", "nope"); code != 2 || !strings.Contains(stderr, "--engine must be") || !strings.Contains(stderr, "usage:") {
		t.Fatalf("unknown engine: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, nil, "--out", "yaml"); code != 2 || !strings.Contains(stderr, "--out must be") {
		t.Fatalf("bad --out: exit %d, %q", code, stderr)
	}
	for _, jobs := range []string{"0", "-1", "1025", "2000000000", "9223372036854775807"} {
		code, _, stderr := runCLI(t, []byte("{}\n"), "--batch", "--jobs", jobs)
		if code != 2 || !strings.Contains(stderr, "--jobs must be between 1 and 1024") || strings.Contains(stderr, "goroutine") {
			t.Fatalf("--jobs %s: exit %d, %q", jobs, code, stderr)
		}
	}
	if code, _, stderr := runCLI(t, nil); code != 2 || !strings.Contains(stderr, "empty") {
		t.Fatalf("empty input: exit %d, %q", code, stderr)
	}
	if code, _, _ := runCLI(t, nil, "/no/such/file.json"); code != 2 {
		t.Fatalf("missing file: exit %d", code)
	}
	if code, out, _ := runCLI(t, nil, "--help"); code != 0 || !strings.Contains(out, "usage:") {
		t.Fatalf("--help: exit %d", code)
	}
	if code, _, _ := runCLI(t, []byte(`{"observation_template": "{observation}"}`)); code != 0 {
		t.Fatalf("ok request: exit %d", code)
	}
}

// TestBatchJSONLines: one response per input line, a blank line included
// (an error response naming its line), parse errors name the line, and a
// summary on stderr.
func TestBatchJSONLines(t *testing.T) {
	in := "{\"observation_template\": \"{observation}\"}\n\n{\"observation_template\": \"x\"}\n{broken\n{\"observation_template\": \"{observation!r}\", \"steps\": [{\"raw_output\": \"\", \"observation\": \"'\"}]}\n \t\r\n{\"observation_template\": \"{observation}\"}"
	code, out, stderr := runCLI(t, []byte(in), "--batch")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (%s)", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 7 {
		t.Fatalf("%d responses for 7 lines:\n%s", len(lines), out)
	}
	for i, want := range []string{`"ok":true`, `"message":"line 2 is blank`, `"invalid_template"`, `"message":"line 4: invalid JSON at byte 1:`,
		`"text":"\"'\""`, `"message":"line 6 is blank`, `"ok":true`} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("response %d lacks %s: %s", i+1, want, lines[i])
		}
	}
	if !strings.Contains(stderr, "7 requests, 4 errors, ") {
		t.Errorf("no summary on stderr: %q", stderr)
	}
}

func TestBatchMsgpackMatchesOneByOne(t *testing.T) {
	cases, err := vectors.Load("../../testdata/vectors")
	if err != nil {
		t.Fatal(err)
	}
	var in, want bytes.Buffer
	n := 0
	for _, c := range cases {
		if c.Response == nil {
			continue // broken requests do not delimit themselves
		}
		in.Write(c.Request)
		want.Write(core.AssembleBytes(c.Request))
		n++
	}
	code, out, stderr := runCLI(t, in.Bytes(), "--in", "msgpack", "--out", "msgpack", "--batch")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if out != want.String() {
		t.Fatalf("--batch output differs from %d single calls", n)
	}
	// A truncated last request is answered, not dropped.
	cut := in.Bytes()[:in.Len()-3]
	code, out, _ = runCLI(t, cut, "--in", "msgpack", "--out", "json", "--batch")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 1 || len(lines) != n || !strings.Contains(lines[n-1], "malformed_request") {
		t.Fatalf("truncated stream: exit %d, %d responses, last %s", code, len(lines), lines[len(lines)-1])
	}
}

func TestTextView(t *testing.T) {
	code, out, stderr := runCLI(t, mustRead(t, "../../examples/react.json"), "--out", "text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"━━ run · 5 messages", "━━ injections · 3 messages", "━━ goal · 1 message", "━━ history (5 steps) · 10 messages", `channel "hints"`, "step 4 observation", "budget: 8,000 chars", "prefix digests: run "} {
		if !strings.Contains(out, want) {
			t.Errorf("the text view lacks %q", want)
		}
	}
	code, out, _ = runCLI(t, []byte(`{"observation_template": "{observation}", "steps": [{"raw_output": "a", "observation": "bcd"}], "max_prompt_chars": 3}`), "--out", "text")
	if code != 0 || !strings.Contains(out, "CONTEXT OVERFLOW by 1 chars") {
		t.Fatalf("overflow line missing: %s", out)
	}
	code, out, _ = runCLI(t, []byte(`{"observation_template": "{observation.x}"}`), "--out", "text")
	if code != 1 || !strings.Contains(out, "error invalid_template at observation_template") {
		t.Fatalf("error view: %s", out)
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestJSONOutputMatchesPython compares the JSON of every ok vector's response
// with Python's json.dumps(ensure_ascii=False) of the same msgpack, decoded
// by a small independent reader in Python.
func TestJSONOutputMatchesPython(t *testing.T) {
	py := os.Getenv("POLYLOOP_PYTHON312")
	if py == "" {
		t.Skip("POLYLOOP_PYTHON312 is not set (make test sets it)")
	}
	cases, err := vectors.Load("../../testdata/vectors")
	if err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	var got bytes.Buffer
	for _, c := range cases {
		if c.Response == nil {
			continue
		}
		stream.Write(c.Response)
		code, out, _ := runCLI(t, c.Request, "--in", "msgpack", "--out", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d", c.Name, code)
		}
		got.WriteString(out)
	}
	script := filepath.Join(t.TempDir(), "tojson.py")
	os.WriteFile(script, []byte(pyToJSON), 0o644)
	cmd := exec.Command(py, script)
	cmd.Stdin = &stream
	want, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		g, w := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Fatalf("line %d differs:\n go:     %s\n python: %s", i, g[i], w[i])
			}
		}
		t.Fatalf("outputs differ in length: %d vs %d lines", len(g), len(w))
	}
}

const pyToJSON = `
import json, struct, sys
data = sys.stdin.buffer.read()
pos = 0
def take(n):
    global pos
    b = data[pos:pos + n]; pos += n; return b
def value():
    c = take(1)[0]
    if c <= 0x7f: return c
    if 0x80 <= c <= 0x8f: return obj(c & 15)
    if 0x90 <= c <= 0x9f: return [value() for _ in range(c & 15)]
    if 0xa0 <= c <= 0xbf: return take(c & 31).decode()
    if c == 0xc2: return False
    if c == 0xc3: return True
    if c in (0xcc, 0xcd, 0xce, 0xcf): return int.from_bytes(take({0xcc: 1, 0xcd: 2, 0xce: 4, 0xcf: 8}[c]), "big")
    if c in (0xd9, 0xda, 0xdb): return take(int.from_bytes(take({0xd9: 1, 0xda: 2, 0xdb: 4}[c]), "big")).decode()
    if c in (0xdc, 0xdd): return [value() for _ in range(int.from_bytes(take(2 if c == 0xdc else 4), "big"))]
    if c in (0xde, 0xdf): return obj(int.from_bytes(take(2 if c == 0xde else 4), "big"))
    raise ValueError(hex(c))
def obj(n):
    d = {}
    for _ in range(n):
        k = value(); d[k] = value()
    return d
out = []
while pos < len(data):
    out.append(json.dumps(value(), ensure_ascii=False, separators=(",", ":")) + "\n")
sys.stdout.buffer.write("".join(out).encode())
`

// TestTextViewShowsControlCharacters: the text view cannot drive the
// terminal: escape sequences, carriage returns and other C0/C1 controls are
// shown as cat -v shows them; bidi controls, zero-width characters, a BOM
// and look-alike spaces as <U+XXXX> (docs/SPEC.md §7.8); newline and tab
// stay layout.
func TestTextViewShowsControlCharacters(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`rm -rf ~/x\rNothing to see`, `rm -rf ~/x^MNothing to see`},                     // a carriage return hiding a command
		{`\u001b[2J\u001b[Hclean`, `^[[2J^[[Hclean`},                                     // clear screen
		{`\u001b]0;title\u0007`, `^[]0;title^G`},                                         // window title
		{`\u001b]52;c;cm0gLXJmIH4=\u0007`, `^[]52;c;cm0gLXJmIH4=^G`},                     // OSC 52 clipboard write
		{`\u009b31mred\u0085`, `<U+009B>31mred<U+0085>`},                                 // C1 CSI and NEL
		{`nul\u0000del\u007f bs\b ff\f`, `nul^@del^? bs^H ff^L`},                         // other C0 and DEL
		{`tab\there`, "tab^Ihere"},                                                       // a tab, as cat -A shows it
		{`ok\udb40\udc48\udb40\udc69\udb40\udc21.`, `ok<hidden text: "Hi!">.`},           // tag characters spell hidden ASCII
		{`\udb40\udc01x\udb40\udc7f\ufe0f\u17b4`, `<U+E0001>x<U+E007F><U+FE0F><U+17B4>`}, // a language tag, cancel tag, variation selector
		{`é ✓ 😀 ‐`, "é ✓ 😀 ‐"},                                                           // printable text untouched
		{`RLO[\u202e]abc`, `RLO[<U+202E>]abc`},                                           // a bidi override reversing what follows
		{`\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`, `<U+202A><U+202B><U+202C><U+202D><U+2066><U+2067><U+2068><U+2069>`},
		{`z\u200bw\u200cj\u200dw\u2060`, `z<U+200B>w<U+200C>j<U+200D>w<U+2060>`},                 // zero-width characters
		{`\ufeffbom`, `<U+FEFF>bom`},                                                             // a byte-order mark
		{`a\u00a0b\u2000c\u200ad\u3000e\u2028`, `a<U+00A0>b<U+2000>c<U+200A>d<U+3000>e<U+2028>`}, // spaces that look like a space
	} {
		req := `{"observation_template": "{observation}", "steps": [{"raw_output": "` + tc.raw + `", "observation": "a\nb"}]}`
		code, out, stderr := runCLI(t, []byte(req), "--out", "text")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.raw, code, stderr)
		}
		if !strings.Contains(out, "    │ "+tc.want+"\n") {
			t.Errorf("%s: the view lacks the line %q:\n%s", tc.raw, tc.want, out)
		}
		if !strings.Contains(out, "    │ a\n    │ b\n") {
			t.Errorf("%s: a newline is no longer a line break:\n%s", tc.raw, out)
		}
		for _, c := range out {
			if c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f && c <= 0x9f {
				t.Errorf("%s: the view writes the control character %U", tc.raw, c)
			}
		}
	}
	code, out, _ := runCLI(t, []byte("{\"observation_template\": \"{observation}\", \"run_messages\": [{\"role\": \"\\u001b[2J\", \"content\": []}]}"), "--out", "text")
	if code != 1 || strings.ContainsRune(out, 0x1b) {
		t.Fatalf("an error message writes ESC raw: %q", out)
	}
}

// TestJSONVectorsThroughTheCLI runs the shared JSON-text vectors through the
// command line (--in json --out msgpack), each as the whole input. An input
// that is only white space is a usage error here (exit 2: "give a request"),
// not a response, so those cases check that instead.
func TestJSONVectorsThroughTheCLI(t *testing.T) {
	cases, err := vectors.LoadJSON("../../testdata/json-vectors")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		code, out, stderr := runCLI(t, c.Text, "--in", "json", "--out", "msgpack")
		if blank(c.Text) {
			if code != 2 || !strings.Contains(stderr, "empty") {
				t.Errorf("%s: empty input: exit %d, %q", c.Name, code, stderr)
			}
			continue
		}
		if want := map[bool]int{true: 0, false: 1}[c.Response != nil]; code != want {
			t.Errorf("%s: exit %d, want %d (%s)", c.Name, code, want, stderr)
		}
		if err := hostvec.CheckJSON(c, []byte(out)); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
}

// TestMissingModuleNamesWasm: a wasm engine without its module says to build
// it or to give --wasm (not a Go option).
func TestMissingModuleNamesWasm(t *testing.T) {
	code, _, stderr := runCLI(t, []byte("{}"), "--engine", "wazero", "--wasm", filepath.Join(t.TempDir(), "none.wasm"))
	if code != 2 || !strings.Contains(stderr, "--wasm PATH") || !strings.Contains(stderr, "make wasm") || strings.Contains(stderr, "Options") {
		t.Fatalf("exit %d, %q", code, stderr)
	}
}

// TestVersion: --version prints VERSION; with a wasm engine, the module's
// sha256 too.
func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, nil, "--version")
	if code != 0 || !strings.HasPrefix(out, "polyloop-assemble "+assembly.Version()+"\n") || strings.TrimSpace(string(mustRead(t, "../../VERSION"))) != assembly.Version() {
		t.Fatalf("--version: exit %d, %q", code, out)
	}
	wasm := "../../wasm/assembly.wasm"
	module := mustRead(t, wasm) // make test.go builds it first
	code, out, stderr := runCLI(t, nil, "--version", "--engine", "wazero", "--wasm", wasm)
	if want := fmt.Sprintf("module sha256 %x (engine wazero)", sha256.Sum256(module)); code != 0 || !strings.Contains(out, want) {
		t.Fatalf("--version --engine wazero: exit %d, %q (want %q) %s", code, out, want, stderr)
	}
}

// batchInput is a stream of n requests of every kind as JSON lines: valid,
// wire errors, syntax errors and blank lines.
func batchInput(n int) []byte {
	r := rand.New(rand.NewPCG(7, 13))
	var b bytes.Buffer
	for i := range n {
		switch i % 10 {
		case 3:
			b.WriteString("\n")
			continue
		case 7:
			b.WriteString("{\"observation_template\": \n")
			continue
		}
		mp := core.EncodeRequest(randreq.Request(r))
		if i%10 == 5 {
			mp = append(mp, 0xc1) // trailing bytes: a wire error
		}
		j, _, err := wirejson.FromMsgpack(nil, mp)
		if err != nil {
			panic(err)
		}
		b.Write(j)
		b.WriteString("\n")
	}
	return b.Bytes()
}

// TestJobsOutputIsIdenticalToOneJob: --jobs 4 writes the same bytes as
// --jobs 1, in input order, in every output format.
func TestJobsOutputIsIdenticalToOneJob(t *testing.T) {
	in := batchInput(3000)
	for _, out := range []string{"json", "msgpack", "text"} {
		c1, o1, e1 := runCLI(t, in, "--batch", "--jobs", "1", "--out", out)
		c4, o4, e4 := runCLI(t, in, "--batch", "--jobs", "4", "--out", out)
		if c1 != 1 || c4 != 1 {
			t.Fatalf("--out %s: exit %d and %d (%s %s)", out, c1, c4, e1, e4)
		}
		if o1 != o4 {
			t.Fatalf("--out %s: --jobs 4 output differs from --jobs 1 (%d vs %d bytes)", out, len(o4), len(o1))
		}
	}
	_, o, _ := runCLI(t, in, "--batch", "--jobs", "3")
	if n := strings.Count(o, "\n"); n != 3000 {
		t.Fatalf("%d responses for 3000 lines", n)
	}
}

// endless is an unbounded stream of one JSON request per line; it counts
// the bytes read.
type endless struct{ read int }

func (e *endless) Read(p []byte) (int, error) {
	const line = "{\"observation_template\": \"{observation}\", \"steps\": [{\"raw_output\": \"ls\", \"observation\": \"a b c\"}]}\n"
	n := 0
	for n+len(line) <= len(p) {
		n += copy(p[n:], line)
	}
	e.read += n
	return n, nil
}

// failAfter accepts n writes, then fails.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, io.ErrClosedPipe
	}
	f.n--
	return len(p), nil
}

// TestBatchOnAnEndlessStream: the batch reads only a bounded window ahead of
// its output, so an unbounded stream takes constant memory; when the output
// fails, reading stops.
func TestBatchOnAnEndlessStream(t *testing.T) {
	in := &endless{}
	var stderr bytes.Buffer
	code := run([]string{"--batch", "--jobs", "4", "--out", "msgpack"}, in, &failAfter{n: 1}, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "writing output") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	// The output fails at its second flush (2 MiB of responses, a few
	// thousand requests); the input read by then is that many lines, the
	// window and the 1 MiB read buffer: a few MiB, not more.
	t.Logf("read %d bytes of an endless input", in.read)
	if in.read > 8<<20 {
		t.Fatalf("read %d bytes of input before stopping: not a bounded window", in.read)
	}
}

// TestProgressLine: on a terminal, a long batch redraws one progress line
// on stderr and clears it before the summary; elsewhere there is none.
func TestProgressLine(t *testing.T) {
	in := batchInput(200)
	_, _, stderr := runCLI(t, in, "--batch")
	if strings.Contains(stderr, "\r") {
		t.Fatalf("a progress line on a non-terminal: %q", stderr)
	}
	defer func(f func(io.Writer) bool, a time.Duration) { isTerminal, progressAfter = f, a }(isTerminal, progressAfter)
	isTerminal = func(io.Writer) bool { return true }
	progressAfter, progressEvery = 0, 0
	_, _, stderr = runCLI(t, in, "--batch", "--jobs", "2")
	if !strings.Contains(stderr, "\r\x1b[Kpolyloop-assemble: ") || !strings.Contains(stderr, "\r\x1b[Kpolyloop-assemble: 200 requests, ") {
		t.Fatalf("no progress line, or not cleared before the summary: %q", stderr[:min(300, len(stderr))])
	}
}
