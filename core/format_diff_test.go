package core

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The CPython differential of the template engine. The oracle is
// testdata/gen/formatdiff.py run by CPython 3.12 (POLYLOOP_PYTHON312); every
// expectation comes from CPython, never from this package.
//
//	POLYLOOP_PYTHON312=$(pyenv root)/versions/3.12.1/bin/python3.12 \
//	POLYLOOP_FORMAT_CASES=120000 go test -count=1 -run TestFormatDifferential ./core/
//
// POLYLOOP_FORMAT_SEED picks the generator seed (default 1).

const formatDiffScript = "../testdata/gen/formatdiff.py"

// python312 returns the CPython 3.12 interpreter or skips the test.
func python312(t *testing.T) string {
	t.Helper()
	py := os.Getenv("POLYLOOP_PYTHON312")
	if py == "" {
		t.Skip("POLYLOOP_PYTHON312 is not set: set it to a CPython 3.12 interpreter, e.g. $(pyenv root)/versions/3.12.1/bin/python3.12, to run the CPython differential")
	}
	return py
}

// runOracle runs formatdiff.py with args and calls line for every output line.
func runOracle(t *testing.T, args []string, line func([]byte)) {
	t.Helper()
	py := python312(t)
	script, err := filepath.Abs(formatDiffScript)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, append([]string{script}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", py, err)
	}
	r := bufio.NewReaderSize(out, 1<<20)
	for {
		b, err := r.ReadBytes('\n')
		if len(b) > 0 {
			line(bytes.TrimSuffix(b, []byte("\n")))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s %v: %v\n%s", py, args, err, stderr.String())
	}
}

type diffCase struct {
	Template      string   `json:"template"`
	Observation   string   `json:"observation"`
	OK            *bool    `json:"ok"`
	Output        *string  `json:"output"`
	OutputOmitted bool     `json:"output_omitted"`
	ReducedWidth  bool     `json:"reduced_width"`
	ErrorType     string   `json:"error_type"`
	Error         string   `json:"error"`
	Gaps          []string `json:"gaps"`
	Skipped       string   `json:"skipped"`
	// Offset is where reference.py's offset rules (docs/SPEC.md §5) place the
	// first problem of the template; nil when it has none.
	Offset *int `json:"offset"`
}

func TestFormatDifferential(t *testing.T) {
	count := 20000
	if s := os.Getenv("POLYLOOP_FORMAT_CASES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("POLYLOOP_FORMAT_CASES=%q: want a positive integer", s)
		}
		count = n
	}
	seed := "1"
	if s := os.Getenv("POLYLOOP_FORMAT_SEED"); s != "" {
		seed = s
	}
	var (
		cases, accepted, bothRejected, skipped int
		outputOmitted, reducedWidth            int
		mismatches, failedCases                int
		caseFailed                             bool
		gapRejections                          = map[string]int{}
		pyErrors                               = map[string]int{}
	)
	fail := func(c *diffCase, format string, args ...any) {
		mismatches++
		if !caseFailed {
			caseFailed = true
			failedCases++
		}
		if mismatches <= 25 {
			t.Errorf("template %q, observation %q: %s", c.Template, c.Observation, fmt.Sprintf(format, args...))
		}
	}
	runOracle(t, []string{"--mode", "cases", "--seed", seed, "--count", strconv.Itoa(count)}, func(line []byte) {
		var c diffCase
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("bad oracle line %.200q: %v", line, err)
		}
		cases++
		caseFailed = false
		tp, perr, gap := parseTemplate(c.Template)
		if verr := ValidateTemplate(c.Template); (verr == nil) != (perr == nil) {
			fail(&c, "ValidateTemplate (%v) disagrees with ParseTemplate (%v)", verr, perr)
		}
		if perr != nil {
			checkErrorShape(t, &c, perr, fail)
		}
		switch {
		case (perr != nil) != (c.Offset != nil):
			fail(&c, "Go says %v; the reference's offset rules give offset %v", perr, c.Offset)
		case perr != nil && perr.Offset != *c.Offset:
			fail(&c, "error offset %d, the reference's offset rules give %d: %v", perr.Offset, *c.Offset, perr)
		}
		if c.Skipped != "" {
			skipped++
			if perr == nil {
				fail(&c, "CPython was not run (%s) but Go accepted; such templates must be rejected", c.Skipped)
			}
			return
		}
		if c.OK == nil {
			t.Fatalf("oracle line without ok: %.200q", line)
		}
		if !*c.OK {
			pyErrors[c.ErrorType]++
			if perr == nil {
				fail(&c, "CPython raises %s(%q) but Go accepts and renders %q", c.ErrorType, c.Error, tp.Render(c.Observation))
				return
			}
			bothRejected++
			return
		}
		// CPython accepts.
		if perr != nil {
			if gap == gapNone {
				fail(&c, "CPython accepts but Go rejects with a non-GAP error: %v", perr)
				return
			}
			if !slices.Contains(c.Gaps, gap.String()) {
				fail(&c, "Go rejects with GAP class %q, which CPython's parse does not report (classes %v): %v", gap, c.Gaps, perr)
				return
			}
			gapRejections[gap.String()]++
			if c.OutputOmitted {
				outputOmitted++
			}
			if c.ReducedWidth {
				reducedWidth++
			}
			return
		}
		if c.OutputOmitted || c.ReducedWidth || c.Output == nil {
			fail(&c, "Go accepts a template with a width above %d (classes %v)", maxFieldWidth, c.Gaps)
			return
		}
		accepted++
		got := tp.Render(c.Observation)
		if got != *c.Output {
			fail(&c, "output differs:\n   go: %q\n  cpy: %q", got, *c.Output)
			return
		}
		app := tp.AppendRender([]byte("prefix"), c.Observation)
		if string(app) != "prefix"+*c.Output {
			fail(&c, "AppendRender differs from CPython: %q", app)
		}
		nb, nc := tp.renderSize(c.Observation, -1)
		if nb != len(*c.Output) || nc != int64(utf8.RuneCountInString(*c.Output)) {
			fail(&c, "renderSize = (%d bytes, %d chars), CPython's output has (%d, %d)", nb, nc, len(*c.Output), utf8.RuneCountInString(*c.Output))
		}
	})
	if cases != count {
		t.Errorf("oracle produced %d cases, want %d", cases, count)
	}
	var gaps []string
	for _, k := range slices.Sorted(maps.Keys(gapRejections)) {
		gaps = append(gaps, fmt.Sprintf("%s=%d", k, gapRejections[k]))
	}
	var errs []string
	for _, k := range slices.Sorted(maps.Keys(pyErrors)) {
		errs = append(errs, fmt.Sprintf("%s=%d", k, pyErrors[k]))
	}
	t.Logf("seed %s: cases=%d accepted(identical output)=%d rejected-by-both=%d GAP-rejections{%s} (of which width>1M with output omitted=%d, width>5M CPython run reduced=%d) skipped=%d mismatches=%d",
		seed, cases, accepted, bothRejected, strings.Join(gaps, " "), outputOmitted, reducedWidth, skipped, mismatches)
	t.Logf("CPython errors: %s", strings.Join(errs, " "))
	if mismatches > 0 {
		t.Errorf("%d mismatches", mismatches)
	}
	// The case count for make test's summary line (scripts/suite reads it:
	// this test counts as its cases, not as one test).
	fmt.Printf("cases %s: %d passed, %d failed\n", t.Name(), cases-failedCases, failedCases)
}

// checkErrorShape checks what every template error must look like: code,
// empty path, an offset inside the template that the message names, and the
// GAP prefix exactly on GAP rejections.
func checkErrorShape(t *testing.T, c *diffCase, e *Error, fail func(*diffCase, string, ...any)) {
	t.Helper()
	_, _, gap := parseTemplate(c.Template)
	if e.Code != CodeInvalidTemplate || e.Path != "" {
		fail(c, "error %v: want code %s and an empty path", e, CodeInvalidTemplate)
	}
	if n := utf8.RuneCountInString(c.Template); e.Offset < 0 || e.Offset > n {
		fail(c, "error offset %d outside the template (%d code points): %v", e.Offset, n, e)
	}
	if !strings.Contains(e.Message, "offset "+strconv.Itoa(e.Offset)) {
		fail(c, "message does not name offset %d: %q", e.Offset, e.Message)
	}
	if (gap != gapNone && gap != gapNoField) != strings.HasPrefix(e.Message, gapPrefix) {
		fail(c, "GAP class %q but message %q", gap, e.Message)
	}
}

// TestPrintableMatchesPython checks the printability used by !r against
// CPython 3.12's str.isprintable for every code point.
func TestPrintableMatchesPython(t *testing.T) {
	var bits []byte
	runOracle(t, []string{"--mode", "printable"}, func(line []byte) { bits = append([]byte(nil), line...) })
	if len(bits) != 0x110000 {
		t.Fatalf("oracle gave %d flags, want %d", len(bits), 0x110000)
	}
	bad := 0
	for c := rune(0); c < 0x110000; c++ {
		want := bits[c] == '1'
		if got := isPrintable(c); got != want {
			bad++
			if bad <= 20 {
				t.Errorf("U+%04X: isPrintable=%v, CPython isprintable=%v", c, got, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d code points differ", bad)
	}
}

// TestDecimalMatchesPython checks the digit values used in widths and
// precisions against unicodedata.decimal for every code point.
func TestDecimalMatchesPython(t *testing.T) {
	var pairs [][2]int
	runOracle(t, []string{"--mode", "decimal"}, func(line []byte) {
		if err := json.Unmarshal(line, &pairs); err != nil {
			t.Fatal(err)
		}
	})
	want := make(map[rune]int, len(pairs))
	for _, p := range pairs {
		want[rune(p[0])] = p[1]
	}
	if len(want) < 600 {
		t.Fatalf("oracle gave only %d decimal digits", len(want))
	}
	bad := 0
	for c := rune(0); c < 0x110000; c++ {
		w, ok := want[c]
		if !ok {
			w = -1
		}
		if got := decimalValue(c); got != w {
			bad++
			if bad <= 20 {
				t.Errorf("U+%04X: decimalValue=%d, unicodedata.decimal=%d", c, got, w)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d code points differ", bad)
	}
}

// TestReprBlocksMatchPython renders {observation!r} and {observation!a} of
// every code point (in blocks of 64, plus quote and backslash mixes) and
// compares with CPython's repr() and ascii(), and checks renderSize.
func TestReprBlocksMatchPython(t *testing.T) {
	rt, err := ParseTemplate("{observation!r}")
	if err != nil {
		t.Fatal(err)
	}
	at, err := ParseTemplate("{observation!a}")
	if err != nil {
		t.Fatal(err)
	}
	n, bad := 0, 0
	runOracle(t, []string{"--mode", "reprblocks"}, func(line []byte) {
		var b struct{ S, R, A string }
		if err := json.Unmarshal(line, &b); err != nil {
			t.Fatal(err)
		}
		n++
		for _, c := range []struct {
			tp   *Template
			want string
		}{{rt, b.R}, {at, b.A}} {
			got := c.tp.Render(b.S)
			nb, nc := c.tp.renderSize(b.S, -1)
			if got != c.want || nb != len(c.want) || nc != int64(utf8.RuneCountInString(c.want)) {
				bad++
				if bad <= 20 {
					t.Errorf("%q: got %q (size %d/%d), CPython %q", b.S, got, nb, nc, c.want)
				}
			}
		}
	})
	if n < 17000 {
		t.Errorf("only %d blocks", n)
	}
	if bad > 0 {
		t.Errorf("%d blocks differ", bad)
	}
}
