package hosttest

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/limitreq"
)

// TestLimitsCLIOverLimit is the CLI's bounded reading at full size
// (POLYLOOP_LIMITS=full): a --batch whose middle request is a 6 GB JSON
// line, or a 3 GB msgpack array32 of 1 MiB bins, is read past and answered
// too_large with its size, and the next request is answered; native under
// ulimit -v 3000000 (less than the request), every engine with a peak RSS
// far below it (the wasm engines reserve 4 GiB of address space and cannot
// run under ulimit -v). cmd/polyloop-assemble's TestBatchOverLimit* check
// the same at a 1 MiB limit.
func TestLimitsCLIOverLimit(t *testing.T) {
	if !limitsFull() {
		t.Skip("pipes 27 GB: run by make test.limits (POLYLOOP_LIMITS=full); cmd/polyloop-assemble checks the same at a lowered limit")
	}
	okReq := core.EncodeRequest(&core.Request{ObservationTemplate: "{observation}"})
	bin := buildCLI(t)
	for _, eng := range []string{"native", "wazero", "wasmtime"} {
		var size int64
		out := runCLIStream(t, bin, eng, "json", func(w io.Writer) (err error) {
			fmt.Fprintln(w, limitreq.OKJSON)
			if size, err = limitreq.LongJSONLine(w, 6<<10); err == nil {
				_, err = fmt.Fprintln(w, limitreq.OKJSON)
			}
			return err
		})
		checkOverLimit(t, eng+" json", out, size)
		out = runCLIStream(t, bin, eng, "msgpack", func(w io.Writer) (err error) {
			w.Write(okReq)
			if size, err = limitreq.LongMsgpackArray(w, 3<<10, 1<<20); err == nil {
				_, err = w.Write(okReq)
			}
			return err
		})
		checkOverLimit(t, eng+" msgpack", out, size)
	}
}

// runCLIStream runs the CLI's --batch on engine with stdin written by feed
// (native under ulimit -v 3000000), checks it exits 1 without a crash and
// with a peak RSS under 512 MB, and returns its JSON output.
func runCLIStream(t *testing.T, bin, engine, in string, feed func(io.Writer) error) string {
	t.Helper()
	kb := 0
	if engine == "native" {
		kb = 3_000_000
	}
	r, err := limitreq.RunBounded([]string{bin, "--engine", engine, "--in", in, "--batch"}, nil, kb, feed)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s --in %s: %v", engine, in, r)
	if r.Code != 1 || r.Crashed() {
		t.Fatalf("%s --in %s: exit %d, want 1; stderr %.1000s", engine, in, r.Code, r.Stderr)
	}
	if r.RSSKB <= 0 || r.RSSKB > 512<<10 {
		t.Errorf("%s --in %s: peak RSS %d KB, want 1..%d", engine, in, r.RSSKB, 512<<10)
	}
	return r.Stdout
}

// checkOverLimit checks the three responses: ok, too_large at "" for a
// request of size bytes (the core's message), ok.
func checkOverLimit(t *testing.T, name, out string, size int64) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%s: %d responses, want 3: %.1000s", name, len(lines), out)
	}
	var r [3]struct {
		OK    bool
		Error struct{ Code, Message, Path string }
	}
	for i := range r {
		if err := json.Unmarshal([]byte(lines[i]), &r[i]); err != nil {
			t.Fatalf("%s: response %d: %v", name, i+1, err)
		}
	}
	want := fmt.Sprintf(core.MsgRequestTooLargeFormat, size)
	if !r[0].OK || !r[2].OK || r[1].Error.Code != "too_large" || r[1].Error.Path != "" || r[1].Error.Message != want {
		t.Errorf("%s: got %s; want ok, too_large (%s), ok", name, out, want)
	}
}
