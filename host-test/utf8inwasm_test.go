package hosttest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/polyloop/assembly/core"
)

// TestUTF8ExhaustiveInWasm runs core's exhaustive UTF-8 tests compiled to
// WebAssembly (GOOS=wasip1, the toolchain and target of the module) under
// wazero: the module's utf8Count (core/utf8_wasm.s, WebAssembly text; the
// native build has the Go form), on every case and placement of
// TestUTF8CountExhaustive (docs/SPEC.md §2).
func TestUTF8ExhaustiveInWasm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the wasm build and the exhaustive run")
	}
	bin := filepath.Join(t.TempDir(), "core.test.wasm")
	build := exec.Command("go", "test", "-c", "-o", bin, "../core/")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building core's tests for wasip1: %v\n%s", err, out)
	}
	code, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	var out bytes.Buffer
	cfg := wazero.NewModuleConfig().
		WithArgs("core.test", "-test.run=^(TestUTF8CountExhaustive|TestValidUTF8|TestCountRunes|TestShortASCII|TestEqualText)$", "-test.v").
		WithStdout(&out).WithStderr(&out).
		WithSysNanotime().WithSysWalltime().WithSysNanosleep()
	_, err = rt.InstantiateWithConfig(ctx, code, cfg)
	var exit *sys.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 0) {
		t.Fatalf("core's tests in wasm: %v\n%s", err, out.String())
	}
	for _, name := range []string{"TestUTF8CountExhaustive", "TestValidUTF8", "TestCountRunes", "TestShortASCII", "TestEqualText"} {
		if !strings.Contains(out.String(), "--- PASS: "+name) {
			t.Fatalf("%s did not pass in wasm:\n%s", name, out.String())
		}
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "checks") || strings.HasPrefix(line, "--- PASS") {
			t.Log("wasm: " + strings.TrimSpace(line))
		}
	}
}

// TestUTF8ThroughModule sends texts holding two-byte sequences (every second
// byte after the lead bytes that start each class) at each of the 16 offsets
// of the unrolled loop's two steps through the module itself on both
// engines: the same bytes as native, ok exactly for valid UTF-8.
func TestUTF8ThroughModule(t *testing.T) {
	leads := []byte{0x7f, 0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff}
	pad := strings.Repeat("a", 32)
	calls := 0
	for _, x := range leads {
		for y := range 256 {
			for pre := range 16 {
				text := pad[:pre] + string([]byte{x, byte(y)}) + pad[:24]
				req := core.EncodeRequest(&core.Request{GoalMessages: []core.Message{{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockTypeText, Text: text}}}}, ObservationTemplate: "{observation}"})
				resp := same(t, strconv.Quote(text), req)
				if _, err := core.DecodeResponse(resp); (err == nil) != utf8.ValidString(text) {
					t.Fatalf("%q: response error %v, utf8.Valid %v", text, err, utf8.ValidString(text))
				}
				calls++
			}
		}
	}
	t.Logf("%d texts, identical on %d engines", calls, len(engines))
	countCases(t, calls*len(engines))
}
