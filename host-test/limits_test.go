package hosttest

import (
	"bytes"
	"crypto/sha256"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/limitreq"
)

// The bounded-resources family (docs/SPEC.md §4; RATIONALE.md "Bounded
// resources"). Each request of internal/testing/limitreq goes through the CLI on
// every engine, one process per run: the engines answer the same bytes,
// the expected code and path, error responses of a few KB, and a peak RSS
// within the memory budget. `make test` runs the family at 1 MiB;
// `make test.limits` (POLYLOOP_LIMITS=full) at full size, and
// checks the time budget too.

const (
	// Memory budget: peak RSS ≤ memPerByte × (request + response) + memConst.
	memPerByte = 4
	memConst   = 128 << 20
	// Time budget (full size only): seconds ≤ 1 + rate × MB of request and
	// response (a 13 KB request may ask for a 629 MB response).
	nativeSecPerMB  = 2.0
	sandboxSecPerMB = 10.0
	maxErrorBytes   = 4096
)

func limitsFull() bool { return os.Getenv("POLYLOOP_LIMITS") == "full" }

// buildCLI is the command-line tool (with wasmtime): $POLYLOOP_CLI where
// make has built it once for every suite that runs it, else built into a
// temp dir.
func buildCLI(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("POLYLOOP_CLI"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "polyloop-assemble")
	build := exec.Command("go", "build", "-o", bin, "../cmd/polyloop-assemble")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the CLI: %v\n%s", err, out)
	}
	return bin
}

// run is one CLI run's result.
type run struct {
	sum     [32]byte
	n       int64  // response bytes
	head    []byte // the response when small, else its first bytes
	rss     int64  // peak resident bytes of the process
	seconds float64
}

// headWriter keeps the first max bytes written.
type headWriter struct {
	b   []byte
	max int
}

func (h *headWriter) Write(p []byte) (int, error) {
	if room := h.max - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// gnuTime is GNU time, which measures the peak RSS of the process it runs.
// (The rusage Go's os/exec returns is no good for that: the child is
// cloned with the test process's memory, and Linux carries that peak
// across execve.)
const gnuTime = "/usr/bin/time"

// runCLI assembles the request in file on engine, input format in.
func runCLI(t *testing.T, bin, engine, in, file string) run {
	t.Helper()
	args := []string{bin, "--engine", engine, "--in", in, "--out", "msgpack", file}
	rssFile := filepath.Join(t.TempDir(), "rss")
	if _, err := os.Stat(gnuTime); err == nil {
		args = append([]string{gnuTime, "-f", "%M", "-o", rssFile}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	h := sha256.New()
	head := &headWriter{max: 64 << 10}
	cnt := &countWriter{}
	cmd.Stdout = io.MultiWriter(h, head, cnt)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	secs := time.Since(start).Seconds()
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
		t.Fatalf("%s: %v\n%s", engine, err, stderr.String())
	}
	var r run
	copy(r.sum[:], h.Sum(nil))
	r.n, r.head, r.seconds = cnt.n, head.b, secs
	r.rss = -1
	if b, err := os.ReadFile(rssFile); err == nil {
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if kb, err := strconv.ParseInt(lines[len(lines)-1], 10, 64); err == nil {
			r.rss = kb << 10
		}
	}
	return r
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// checkRun checks one engine's answer to c against the expectations and the
// budgets, and logs its figures (the RATIONALE table is made of them).
func checkRun(t *testing.T, engine string, c limitreq.Case, r run) {
	t.Helper()
	if c.Code != "" {
		if r.n > maxErrorBytes {
			t.Errorf("%s: a %d-byte error response, over %d", engine, r.n, maxErrorBytes)
		}
		_, err := core.DecodeResponse(r.head)
		e, ok := err.(*core.Error)
		if !ok || e.Code != c.Code || e.Path != c.Path {
			t.Errorf("%s: got %.200v, want %s at %.80q", engine, err, c.Code, c.Path)
		}
	} else if r.n <= int64(len(r.head)) {
		if _, err := core.DecodeResponse(r.head); err != nil {
			t.Errorf("%s: got %.200v, want an ok response", engine, err)
		}
	} else if !bytes.HasPrefix(r.head, []byte("\x88\xa1v\x01\xa2ok\xc3")) {
		t.Errorf("%s: a %d-byte response that is not ok", engine, r.n)
	}
	inout := int64(len(c.Request)) + r.n
	if r.rss < 0 {
		t.Logf("%s: no peak RSS (%s is missing): the memory budget is not checked", engine, gnuTime)
	} else if budget := memPerByte*inout + memConst; r.rss > budget {
		t.Errorf("%s: peak RSS %d MB for %d MB in and out, over the budget of %d MB", engine, r.rss>>20, inout>>20, budget>>20)
	}
	mb := float64(inout) / (1 << 20)
	rate := sandboxSecPerMB
	if engine == "native" {
		rate = nativeSecPerMB
	}
	if limitsFull() && r.seconds > 1+rate*mb {
		t.Errorf("%s: %.1f s for %.1f MB in and out, over the budget of %.1f s", engine, r.seconds, mb, 1+rate*mb)
	}
	t.Logf("%-16s %-8s request %11d B  response %11d B  %7.2f s  %8.3f s/MB  peak %6d MB  %5.2f B/B",
		c.Name, engine, len(c.Request), r.n, r.seconds, r.seconds/max(mb, 1e-9), r.rss>>20, float64(r.rss)/float64(inout))
}

// TestLimits runs the family on native, wazero and wasmtime (through the
// CLI, one process per run) and compares the answers byte for byte.
func TestLimits(t *testing.T) {
	n, tb := 1<<20, 1<<20
	if limitsFull() {
		n, tb = limitreq.FullSize, limitreq.FullTemplateBytes
	}
	bin := buildCLI(t)
	dir := t.TempDir()
	for _, c := range limitreq.Cases(n, tb) {
		t.Run(c.Name, func(t *testing.T) {
			file := filepath.Join(dir, c.Name+".msgpack")
			if err := os.WriteFile(file, c.Request, 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(file)
			var first run
			for i, eng := range []string{"native", "wazero", "wasmtime"} {
				r := runCLI(t, bin, eng, "msgpack", file)
				checkRun(t, eng, c, r)
				if i == 0 {
					first = r
				} else if r.sum != first.sum {
					t.Errorf("%s answers %d bytes unlike native's %d (sha256 %x… vs %x…)", eng, r.n, first.n, r.sum[:8], first.sum[:8])
				}
			}
		})
	}
}

// TestLimitsDeepJSON is the CLI's deep JSON: a request nested 9,990 deep around a
// long string, as JSON text and as msgpack, gets the same verdict; deeper
// than 10,000 too. The JSON reader is the CLI's (wirejson).
func TestLimitsDeepJSON(t *testing.T) {
	strBytes := 64 << 10
	if limitsFull() {
		strBytes = 1 << 20
	}
	bin := buildCLI(t)
	dir := t.TempDir()
	// Deeper than 10,000 first: the old reader's verdict there (path "")
	// says the linear JSON reader is absent, and then its time at 9,990 is
	// the known 10 s per MB.
	for _, depth := range []int{10_500, 9990} {
		text, mp, c := limitreq.DeepJSON(depth, strBytes)
		jf, mf := filepath.Join(dir, "deep.json"), filepath.Join(dir, "deep.msgpack")
		if err := os.WriteFile(jf, text, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(mf, mp, 0o644); err != nil {
			t.Fatal(err)
		}
		rm := runCLI(t, bin, "native", "msgpack", mf)
		checkRun(t, "native", c, rm)
		rj := runCLI(t, bin, "native", "json", jf)
		c.Request = text
		checkRun(t, "native", c, rj)
		if rj.sum != rm.sum {
			t.Errorf("depth %d: JSON and msgpack get different answers", depth)
		}
	}
}

// TestLimitsPrompt is docs/SPEC.md §7.3 at the real limit on the WebAssembly
// prompt: steps of a 600-field template of width 1,048,576 (629 MB each)
// are added until one would take the response past 1.5 GiB; that AddStep
// is too_large, as Assemble of the same steps is, and the prompt is
// unchanged. Full size only (it holds 1.3 GB of text).
func TestLimitsPrompt(t *testing.T) {
	if !limitsFull() {
		t.Skip("holds 1.3 GB: run by make test.limits (POLYLOOP_LIMITS=full); core's TestResponseLimitEverywhere checks the same at a lowered limit")
	}
	tmpl := strings.Repeat("{observation:1048576}", 600)
	for _, r := range runners {
		p, err := r.NewPrompt(&core.Request{ObservationTemplate: tmpl})
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for ; k < 3; k++ {
			if err = p.AddStep("", ""); err != nil {
				break
			}
		}
		e, ok := err.(*core.Error)
		if !ok || e.Code != core.CodeTooLarge || k != 2 || len(p.Response().Messages) != 4 {
			t.Fatalf("%s: AddStep %d: %v (%d messages), want too_large at the third step", r.Engine(), k, err, len(p.Response().Messages))
		}
		steps := make([]core.Step, 3)
		if _, err := core.DecodeResponse(r.AssembleBytes(core.EncodeRequest(&core.Request{ObservationTemplate: tmpl, Steps: steps}))); err == nil || err.(*core.Error).Code != core.CodeTooLarge {
			t.Fatalf("%s: Assemble of 3 steps: %v, want too_large", r.Engine(), err)
		}
		t.Logf("%s: 2 AddSteps ok, the third too_large, as Assemble", r.Engine())
	}
}
