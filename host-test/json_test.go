package hosttest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/polyloop/assembly/core"

	"github.com/polyloop/assembly/internal/testing/deepjson"
	"github.com/polyloop/assembly/internal/testing/hostvec"
	"github.com/polyloop/assembly/internal/testing/vectors"
	"github.com/polyloop/assembly/wasmhost"
	"github.com/polyloop/assembly/wasmhost/wasmtime"
	"github.com/polyloop/assembly/wirejson"
)

// TestJSONVectorsEveryEngine runs the shared JSON-text vectors through the
// module's assemble_json export on wazero and wasmtime (Runner.AssembleJSON):
// each answer is what the case expects and byte-identical to the native
// reader's (syntax-error messages included).
func TestJSONVectorsEveryEngine(t *testing.T) {
	cases, err := vectors.LoadJSON("../testdata/json-vectors")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		native := wirejson.AppendAssemble(nil, c.Text)
		for _, r := range runners {
			got := r.AssembleJSON(c.Text)
			if err := hostvec.CheckJSON(c, got); err != nil {
				t.Errorf("%s: %s: %v", r.Engine(), c.Name, err)
			} else if !bytes.Equal(got, native) {
				t.Errorf("%s: %s: differs from the native reader:\n got    %.200q\n native %.200q", r.Engine(), c.Name, got, native)
			}
		}
	}
	t.Logf("%d JSON-text vectors, identical on native, wazero and wasmtime", len(cases))
	countCases(t, 3*len(cases))
}

// TestJSONOver4GiBIsTooLarge: JSON text of 4 GiB, one byte more than
// msgpack can count, is too_large at "" with the message the Python and JS
// bindings give it (core.MsgRequestTooLargeFormat of its size), natively and
// through Runner.AssembleJSON on both engines. (The text is never read:
// its zero pages cost no memory.)
func TestJSONOver4GiBIsTooLarge(t *testing.T) {
	text := make([]byte, 1<<32)
	want := fmt.Sprintf(core.MsgRequestTooLargeFormat, len(text))
	check := func(name string, resp []byte) {
		_, err := core.DecodeResponse(resp)
		if e, ok := err.(*core.Error); !ok || e.Code != core.CodeTooLarge || e.Path != "" || e.Message != want {
			t.Errorf("%s: %v; want too_large at \"\": %s", name, err, want)
		}
	}
	check("native", wirejson.AppendAssemble(nil, text))
	for _, r := range runners {
		check(r.Engine(), r.AssembleJSON(text))
	}
}

// deepMemConst is the constant of the deep-JSON memory budgets: a process's
// own (the CLI on wasmtime starts at about 40 MB) and a module's.
const deepMemConst = 96 << 20

// TestDeepJSONEveryHost is docs/SPEC.md §2.3's depth bound on the Go hosts:
// deep JSON of 1 and 10 MB (deepjson.SizedNames: '[' only, {"a": only,
// deep arrays in steps, deep objects under an unknown key), and 100 MB of
// '[', gets the one
// answer, byte for byte (code, path and message), from the CLI on native,
// wazero and wasmtime and from Runner.AssembleJSON on both engines. The
// CLI's peak RSS is at most twice the text, plus deepMemConst; the module's
// linear memory at most 1.5 times (its copy of the text and the reader's
// stack of at most half a byte per byte; the room it keeps for the msgpack
// is at most 64 MiB until the msgpack needs it), plus deepMemConst.
func TestDeepJSONEveryHost(t *testing.T) {
	deepJSONHosts(t, 1<<20, 4)
	deepJSONHosts(t, 10<<20, 4)
	deepJSONHosts(t, 100<<20, 1)
}

// TestLimitsDeepJSONGiB is TestDeepJSONEveryHost at 1,000 MB (make
// test.limits).
func TestLimitsDeepJSONGiB(t *testing.T) {
	if !limitsFull() {
		t.Skip("1,000 MB of JSON: run by make test.limits (POLYLOOP_LIMITS=full); TestDeepJSONEveryHost runs 1 to 100 MB")
	}
	deepJSONHosts(t, 1000<<20, 4)
	// A request too large only as msgpack (120 million short floats deep
	// down, 480 MB of text): too_large with the size of that msgpack, which
	// the reader then writes in full (2.25 times the text: no memory budget).
	c := deepjson.TooLarge(120_000_000)
	file := filepath.Join(t.TempDir(), "deep.json")
	if err := os.WriteFile(file, c.Text, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, eng := range []string{"native", "wasmtime"} {
		r := runCLI(t, buildCLI(t), eng, "json", file)
		checkDeepAnswer(t, "too large, CLI "+eng, r.head, c.Want)
		t.Logf("%-9s %10d B  CLI %-8s peak RSS %5d MB (%.2f B/B)", c.Name, len(c.Text), eng, r.rss>>20, float64(r.rss)/float64(len(c.Text)))
	}
	os.Remove(file)
	deepJSONRunner(t, wasmtime.New, c, false)
}

// deepJSONHosts runs the first cases of deepjson.SizedNames at n bytes on
// every host.
func deepJSONHosts(t *testing.T, n, cases int) {
	bin := buildCLI(t)
	file := filepath.Join(t.TempDir(), "deep.json")
	for _, name := range deepjson.SizedNames[:cases] {
		c := deepjson.SizedCase(name, n)
		if err := os.WriteFile(file, c.Text, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, eng := range []string{"native", "wazero", "wasmtime"} {
			r := runCLI(t, bin, eng, "json", file)
			checkDeepAnswer(t, fmt.Sprintf("%s, %d bytes, CLI %s", c.Name, len(c.Text), eng), r.head, c.Want)
			if r.rss > 2*int64(len(c.Text))+deepMemConst {
				t.Errorf("%s, %d bytes: the CLI on %s peaks at %d MB, over twice the text and %d MB", c.Name, len(c.Text), eng, r.rss>>20, deepMemConst>>20)
			}
			t.Logf("%-9s %10d B  CLI %-8s peak RSS %5d MB (%.2f B/B)", c.Name, len(c.Text), eng, r.rss>>20, float64(r.rss)/float64(len(c.Text)))
		}
		os.Remove(file)
		for _, open := range []func(wasmhost.Options) (*wasmhost.Runner, error){wasmhost.New, wasmtime.New} {
			deepJSONRunner(t, open, c, true)
		}
	}
}

// deepJSONRunner runs c through Runner.AssembleJSON on a new runner of one
// instance, whose linear memory is then the call's (held to its budget
// when budget).
func deepJSONRunner(t *testing.T, open func(wasmhost.Options) (*wasmhost.Runner, error), c deepjson.Sized, budget bool) {
	r, err := open(wasmhost.Options{MaxInstances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	checkDeepAnswer(t, fmt.Sprintf("%s, %d bytes, %s AssembleJSON", c.Name, len(c.Text), r.Engine()), r.AssembleJSON(c.Text), c.Want)
	peak := r.PeakMemoryBytes()
	if budget && peak > uint64(len(c.Text))*3/2+deepMemConst {
		t.Errorf("%s, %d bytes: %s's module grew to %d MB, over 1.5 times the text and %d MB", c.Name, len(c.Text), r.Engine(), peak>>20, deepMemConst>>20)
	}
	t.Logf("%-9s %10d B  %-12s module %5d MB (%.2f B/B)", c.Name, len(c.Text), r.Engine(), peak>>20, float64(peak)/float64(len(c.Text)))
}

func checkDeepAnswer(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		_, g := core.DecodeResponse(got)
		_, w := core.DecodeResponse(want)
		t.Errorf("%s: answered %.200v\n want %.200v", what, g, w)
	}
}
