package hosttest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/randreq"
	"github.com/polyloop/assembly/internal/testing/vectors"
	"github.com/polyloop/assembly/wasmhost"
	"github.com/polyloop/assembly/wasmhost/wasmtime"
	"github.com/polyloop/assembly/wirejson"
)

// engine is one build of the core under test.
type engine struct {
	name     string
	assemble func([]byte) []byte
}

var (
	engines []engine
	runners []*wasmhost.Runner
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(compileOnceEnv); dir != "" {
		compileOnceChild(dir) // a child process of TestColdCacheCompilesOnce
		return
	}
	if dir := os.Getenv(cacheCallEnv); dir != "" {
		cacheCallChild(dir) // a child process of the cache integrity tests
		return
	}
	wz, err := wasmhost.New(wasmhost.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "host-test:", err)
		os.Exit(1)
	}
	wt, err := wasmtime.New(wasmhost.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "host-test:", err)
		os.Exit(1)
	}
	runners = []*wasmhost.Runner{wz, wt}
	engines = []engine{
		{"native", core.AssembleBytes},
		{"wazero", wz.AssembleBytes},
		{"wasmtime", wt.AssembleBytes},
	}
	code := m.Run()
	wz.Close()
	wt.Close()
	os.Exit(code)
}

// same runs req on every engine and fails unless all answers are identical.
func same(t *testing.T, label string, req []byte) []byte {
	t.Helper()
	want := engines[0].assemble(req)
	for _, e := range engines[1:] {
		if got := e.assemble(req); !bytes.Equal(got, want) {
			t.Fatalf("%s: %s answers differently from native:\n native: %x\n %s: %x", label, e.name, trim(want), e.name, trim(got))
		}
	}
	return want
}

func trim(b []byte) []byte {
	if len(b) > 300 {
		return b[:300]
	}
	return b
}

func TestVectorsEveryEngine(t *testing.T) {
	cases, err := vectors.Load("../testdata/vectors")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		got := same(t, c.File+"/"+c.Name, c.Request)
		if c.Response != nil {
			if !bytes.Equal(got, c.Response) {
				t.Errorf("%s/%s: response differs from the vector", c.File, c.Name)
			}
			continue
		}
		_, err := core.DecodeResponse(got)
		e, ok := err.(*core.Error)
		if !ok || string(e.Code) != c.Error.Code || e.Path != c.Error.Path || e.Offset != c.Error.WantOffset() {
			t.Errorf("%s/%s: want %s at %q offset %d, got %v", c.File, c.Name, c.Error.Code, c.Error.Path, c.Error.WantOffset(), err)
		}
	}
	t.Logf("%d vectors, identical on %d engines", len(cases), len(engines))
	countCases(t, len(cases)*len(engines))
}

func randomCount() int {
	if n, err := strconv.Atoi(os.Getenv("POLYLOOP_RANDOM_REQUESTS")); err == nil && n > 0 {
		return n
	}
	return 20000
}

func TestRandomRequests(t *testing.T) {
	r := rand.New(rand.NewPCG(2026, 11))
	n := randomCount()
	codes := map[string]int{}
	for i := range n {
		req := randreq.Bytes(r)
		resp := same(t, "random request "+strconv.Itoa(i)+" (seed 2026/11)", req)
		if _, err := core.DecodeResponse(resp); err != nil {
			e, ok := err.(*core.Error)
			if !ok {
				t.Fatalf("request %d: the response does not decode: %v", i, err)
			}
			if e.Code == core.CodeInternal {
				t.Fatalf("request %d: internal error: %s", i, e.Message)
			}
			codes[string(e.Code)]++
		} else {
			codes["ok"]++
		}
	}
	t.Logf("%d random requests identical on %d engines; outcomes %v", n, len(engines), codes)
	countCases(t, n*len(engines))
	if codes["ok"] < n/4 || codes["malformed_request"] == 0 {
		t.Fatalf("the generator lost its mix of valid and broken requests: %v", codes)
	}
}

// TestFuzzCorpora runs every checked-in fuzz seed on every engine.
func TestFuzzCorpora(t *testing.T) {
	files, _ := filepath.Glob("../core/testdata/fuzz/*/*")
	if len(files) == 0 {
		t.Fatal("no fuzz seed corpus found under core/testdata/fuzz")
	}
	for _, f := range files {
		args, err := readCorpusFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		switch filepath.Base(filepath.Dir(f)) {
		case "FuzzAssembleBytes":
			same(t, f, args[0])
		case "FuzzTemplate":
			req := core.EncodeRequest(&core.Request{ObservationTemplate: string(args[0]), Steps: []core.Step{{Observation: string(args[len(args)-1])}}})
			same(t, f, req)
		}
	}
	t.Logf("%d seed files identical on %d engines", len(files), len(engines))
	countCases(t, len(files)*len(engines))
}

// readCorpusFile reads a "go test fuzz v1" file: one Go literal per line.
func readCorpusFile(path string) ([][]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 || lines[0] != "go test fuzz v1" {
		return nil, fmt.Errorf("not a go fuzz corpus file")
	}
	var args [][]byte
	for _, l := range lines[1:] {
		open := strings.IndexByte(l, '(')
		if open < 0 || !strings.HasSuffix(l, ")") {
			return nil, fmt.Errorf("cannot read %q", l)
		}
		s, err := strconv.Unquote(l[open+1 : len(l)-1])
		if err != nil {
			return nil, fmt.Errorf("cannot read %q: %v", l, err)
		}
		args = append(args, []byte(s))
	}
	return args, nil
}

func TestConcurrency(t *testing.T) {
	const workers, calls = 16, 1000
	r := rand.New(rand.NewPCG(7, 7))
	reqs := make([][]byte, 200)
	for i := range reqs {
		reqs[i] = randreq.Bytes(r)
	}
	want := make([][]byte, len(reqs))
	for i, q := range reqs {
		want[i] = core.AssembleBytes(q)
	}
	for _, rn := range engines {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var bad []string
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for c := range calls {
					i := (w*calls + c*31) % len(reqs)
					if got := rn.assemble(reqs[i]); !bytes.Equal(got, want[i]) {
						mu.Lock()
						bad = append(bad, fmt.Sprintf("worker %d call %d", w, c))
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		if len(bad) > 0 {
			t.Fatalf("%s: %d of %d concurrent answers differ from serial ones, first %s", rn.name, len(bad), workers*calls, bad[0])
		}
		t.Logf("%s: %d goroutines × %d calls identical to serial answers", rn.name, workers, calls)
	}
}

// The internal messages every host gives (docs/SPEC.md §7).
const outOfMemory = "the assembly module ran out of memory; the instance was discarded and the next call gets a fresh one"

// TestTrapRecovery caps linear memory at 64 MiB and sends a request that
// needs more: the call must answer an internal error, and the next call must
// be served by a fresh instance.
// cappedRunners opens both engines with one instance each under a 64 MiB
// memory cap (closed when t ends), and returns them with a request over the
// cap: an 80 MiB observation.
func cappedRunners(t *testing.T) ([]*wasmhost.Runner, []byte) {
	t.Helper()
	opts := wasmhost.Options{MemoryLimitBytes: 64 << 20, MaxInstances: 1}
	wz, err := wasmhost.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wz.Close() })
	wt, err := wasmtime.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wt.Close() })
	big := core.EncodeRequest(&core.Request{ObservationTemplate: "{observation}", Steps: []core.Step{{Observation: strings.Repeat("x", 80<<20)}}})
	return []*wasmhost.Runner{wz, wt}, big
}

func TestTrapRecovery(t *testing.T) {
	capped, big := cappedRunners(t)
	small := core.EncodeRequest(&core.Request{ObservationTemplate: "{observation!r}", Steps: []core.Step{{RawOutput: "ls", Observation: "a\tb"}}})
	for _, rn := range capped {
		if err := rn.Warm(); err != nil {
			t.Fatal(err)
		}
		_, err := core.DecodeResponse(rn.AssembleBytes(big))
		var e *core.Error
		if !errors.As(err, &e) || e.Code != core.CodeInternal || e.Path != "" || e.Message != outOfMemory {
			t.Fatalf("%s: an 80 MiB request under a 64 MiB cap: want internal %q, got %v", rn.Engine(), outOfMemory, err)
		}
		// The typed call gives the same message and the host's detail.
		_, err = rn.Assemble(&core.Request{ObservationTemplate: "{observation}", Steps: []core.Step{{Observation: strings.Repeat("x", 80<<20)}}})
		if !errors.As(err, &e) || e.Message != outOfMemory || !strings.Contains(e.Detail, rn.Engine()) || !strings.Contains(e.Detail, "out of memory") {
			t.Fatalf("%s: typed call: want %q with the engine's detail, got %v (detail %q)", rn.Engine(), outOfMemory, err, e.Detail)
		}
		t.Logf("%s: trapped call answered %q; detail: %.300q", rn.Engine(), e.Message, e.Detail)
		for range 3 {
			if got := rn.AssembleBytes(small); !bytes.Equal(got, core.AssembleBytes(small)) {
				t.Fatalf("%s: the call after a trap is wrong", rn.Engine())
			}
		}
	}
}

// TestHugeRequest sends a 256 MiB request to every engine: it must be
// answered, identically, never crash.
func TestHugeRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the 256 MiB request")
	}
	obs := strings.Repeat("0123456789abcdéf", 16<<20) // 17 bytes × 16 Mi = 272 MiB, 256 Mi code points
	req := core.EncodeRequest(&core.Request{ObservationTemplate: "<{observation}>", Steps: []core.Step{{RawOutput: "cat big", Observation: obs}}})
	var sums []string
	for _, e := range engines {
		resp := e.assemble(req)
		r, err := core.DecodeResponse(resp)
		if err != nil {
			e, ok := err.(*core.Error)
			if !ok || e.Code != core.CodeTooLarge {
				t.Fatalf("a %d MiB request: want a response or too_large, got %v", len(req)>>20, err)
			}
		} else if r.MessageChars[1] != 256<<20+2 {
			t.Fatalf("%s: observation size %d, want %d", e.name, r.MessageChars[1], 256<<20+2)
		}
		sum := sha256.Sum256(resp)
		sums = append(sums, fmt.Sprintf("%x", sum[:8]))
		t.Logf("%s: %d MiB request → %d MiB response, sha256 %x…", e.name, len(req)>>20, len(resp)>>20, sum[:8])
	}
	for _, s := range sums[1:] {
		if s != sums[0] {
			t.Fatalf("the engines answer the 256 MiB request differently: %v", sums)
		}
	}
}

// TestCLIEngines streams the vectors and random requests through the CLI with
// --batch on each engine and compares the output streams byte for byte.
func TestCLIEngines(t *testing.T) {
	bin := buildCLI(t)
	cases, err := vectors.Load("../testdata/vectors")
	if err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	for _, c := range cases {
		stream.Write(c.Request)
	}
	// Broken vectors are not self-delimiting: the stream splits them its own
	// way, the same on every engine.
	r := rand.New(rand.NewPCG(99, 1))
	var valid bytes.Buffer
	for range 2000 {
		valid.Write(core.EncodeRequest(randreq.Request(r)))
	}
	inputs := []struct {
		name string
		in   []byte
		want int // responses expected; -1: as the stream splits
	}{{"vectors", stream.Bytes(), -1}, {"random", valid.Bytes(), 2000}}
	for _, input := range inputs {
		in := input.in
		var outs [][]byte
		for _, eng := range []string{"native", "wazero", "wasmtime"} {
			cmd := exec.Command(bin, "--engine", eng, "--in", "msgpack", "--out", "msgpack", "--batch")
			cmd.Stdin = bytes.NewReader(in)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
				t.Fatalf("%s: %v\n%s", eng, err, stderr.String())
			}
			outs = append(outs, out)
		}
		for i, eng := range []string{"wazero", "wasmtime"} {
			if !bytes.Equal(outs[i+1], outs[0]) {
				t.Fatalf("CLI --engine %s --batch output differs from --engine native (%d vs %d bytes)", eng, len(outs[i+1]), len(outs[0]))
			}
		}
		// The output is one response per request, in order.
		n := 0
		br := bufio.NewReader(bytes.NewReader(outs[0]))
		for {
			v, err := wirejson.NextMsgpack(br, nil)
			if err != nil {
				break
			}
			if _, err := core.DecodeResponse(v); err == core.ErrBadResponse {
				t.Fatalf("response %d of the stream does not decode", n)
			}
			n++
		}
		if input.want >= 0 && n != input.want {
			t.Fatalf("%s stream: %d responses for %d requests", input.name, n, input.want)
		}
		t.Logf("CLI --batch %s stream: %d bytes in, %d responses, identical on 3 engines", input.name, len(in), n)
	}
}
