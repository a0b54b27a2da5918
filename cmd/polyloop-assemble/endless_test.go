package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/limitreq"
)

// An endless input (/dev/zero, a stream whose request never ends) gets a
// verdict from every subcommand once readCeiling bytes of it are read past
// the request limit: too_large, "more than N bytes" (the end was not
// reached), never a read for ever.

// withCeiling lowers readCeiling for the rest of the test.
func withCeiling(t *testing.T, n int64) {
	old := readCeiling
	readCeiling = n
	t.Cleanup(func() { readCeiling = old })
}

// zeros is an endless reader: prefix, then pattern repeated for ever.
type zeros struct {
	prefix, pattern []byte
	off             int
}

func (z *zeros) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(z.prefix) > 0 {
			k := copy(p[n:], z.prefix)
			z.prefix, n = z.prefix[k:], n+k
			continue
		}
		k := copy(p[n:], z.pattern[z.off:])
		z.off, n = (z.off+k)%len(z.pattern), n+k
	}
	return n, nil
}

// runWithin runs the command on stdin, failing the test if it has not
// answered within d.
func runWithin(t *testing.T, d time.Duration, stdin io.Reader, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(args, stdin, &out, &errb) }()
	select {
	case code := <-done:
		return code, out.String(), errb.String()
	case <-time.After(d):
		t.Fatalf("%q: no verdict after %v (the input is read for ever)", args, d)
		return 0, "", ""
	}
}

func TestEndlessInputGetsAVerdict(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("needs /dev/zero")
	}
	const limit, ceiling = 1000, 4 << 20
	withLimit(t, limit)
	withCeiling(t, ceiling)
	more := fmt.Sprintf("more than %d bytes (read no further)", ceiling)
	endlessReq := fmt.Sprintf(msgRequestEndlessFormat, ceiling)
	run1 := writeFile(t, "run.jsonl", runReq(0)+"\n")
	req := writeFile(t, "r.json", okJSON)
	// A msgpack request whose arrays never end: each array32 holds 2^32-1
	// arrays32.
	deep := func() io.Reader { return &zeros{pattern: []byte{0xdd, 0xff, 0xff, 0xff, 0xff}} }
	zero := func() io.Reader { return &zeros{pattern: []byte{0}} }
	for _, eng := range cliEngines() {
		for _, tc := range []struct {
			name  string
			stdin func() io.Reader
			args  []string
			path  string // of the answer's error ("call" for the report's first call, "usage" its usage)
			want  string
			code  int
		}{
			{"cache /dev/zero", zero, []string{"cache", "/dev/zero"}, "call", endlessReq, 0},
			{"cache stdin msgpack", deep, []string{"cache"}, "call", endlessReq, 0},
			{"cache --usage /dev/zero", zero, []string{"cache", "--usage", "/dev/zero", run1}, "usage",
				"the usage on line 1 of --usage is " + more, 0},
			{"export stdin", zero, []string{"export", "--provider", "anthropic"}, "", endlessReq, 1},
			{"export --body /dev/zero", zero, []string{"export", "--provider", "anthropic", "--body", "/dev/zero", req},
				"options.body", "the body is " + more, 1},
			{"export /dev/zero", zero, []string{"export", "--provider", "anthropic", "/dev/zero"}, "", endlessReq, 1},
			{"main stdin", zero, nil, "", endlessReq, 1},
			{"main --batch", zero, []string{"--batch"}, "", endlessReq, 1},
			{"main --batch msgpack", deep, []string{"--batch", "--in", "msgpack"}, "", endlessReq, 1},
		} {
			name := eng[1] + " " + tc.name
			code, out, errs := runWithin(t, 60*time.Second, tc.stdin(), append(append([]string{}, tc.args...), eng...)...)
			var e *struct{ Code, Message, Path string }
			switch tc.path {
			case "call", "usage":
				r := parseReport(t, name, out)
				if len(r.Calls) != 1 {
					t.Fatalf("%s: %d calls, want 1: %.500s", name, len(r.Calls), out)
				}
				if e = r.Calls[0].Error; tc.path == "usage" && r.Calls[0].Usage != nil {
					e = r.Calls[0].Usage.Error
				}
			default:
				var a struct {
					Error *struct{ Code, Message, Path string }
				}
				if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &a); err != nil {
					t.Fatalf("%s: not JSON (%v): %.300s", name, err, out)
				}
				e = a.Error
			}
			wantPath := tc.path
			if wantPath == "call" {
				wantPath = ""
			}
			if code != tc.code || e == nil || e.Code != string(core.CodeTooLarge) || e.Path != wantPath || !strings.HasPrefix(e.Message, tc.want) {
				t.Errorf("%s: exit %d, error %+v (stderr %q); want %d, too_large at %q: %q", name, code, e, errs, tc.code, wantPath, tc.want)
			}
		}
	}
}

// TestEndlessInputInBoundedMemory: /dev/zero through cache, cache --usage,
// export (stdin) and export --body at the 1 MiB test limit and the real
// 4 GiB ceiling: a verdict in bounded memory, natively under an
// address-space limit smaller than what is read.
func TestEndlessInputInBoundedMemory(t *testing.T) {
	if _, err := os.Stat(limitreq.GNUTime); err != nil {
		t.Skip("needs GNU time to measure the peak RSS")
	}
	if testing.Short() {
		t.Skip("reads 4 GiB of /dev/zero four times")
	}
	run1 := writeFile(t, "run.jsonl", runReq(0)+"\n")
	req := writeFile(t, "r.json", okJSON)
	none := func(io.Writer) error { return nil }
	endless := func(w io.Writer) error {
		buf := make([]byte, 1<<20)
		for {
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
	}
	more := fmt.Sprintf("more than %d bytes (read no further)", readCeiling)
	for _, tc := range []struct {
		args []string
		feed func(io.Writer) error
	}{
		{[]string{"cache", "/dev/zero"}, none},
		{[]string{"cache", "--usage", "/dev/zero", run1}, none},
		{[]string{"export", "--provider", "openai-chat"}, endless},
		{[]string{"export", "--provider", "openai-chat", "--body", "/dev/zero", req}, none},
	} {
		start := time.Now()
		r := runCommand(t, tc.args, tc.feed)
		t.Logf("%q: %v in %v", tc.args, r, time.Since(start).Round(time.Millisecond))
		if r.Crashed() || !strings.Contains(r.Stdout, `"too_large"`) || !strings.Contains(r.Stdout, more) {
			t.Errorf("%q: exit %d, %.300s (stderr %.300s); want too_large, %q", tc.args, r.Code, r.Stdout, r.Stderr, more)
		}
		if r.RSSKB <= 0 || r.RSSKB > 300<<10 {
			t.Errorf("%q: peak RSS %d KB, want 1..%d KB", tc.args, r.RSSKB, 300<<10)
		}
	}
}

// TestExportFileOverLimitIsTooLarge: an export request file over the real
// 1 GiB limit (sparse: 2 GiB and 5 GiB, past the read ceiling) is too_large
// with its own size, taken from the file, not read, as from a pipe
// (TestExportInputOverLimit) and as the main command answers a file.
func TestExportFileOverLimitIsTooLarge(t *testing.T) {
	for _, size := range []int64{2 << 30, 5 << 30} {
		file := writeFile(t, "huge.json", "")
		if err := os.Truncate(file, size); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"export", "--provider", "anthropic", file}, {file}} {
			code, out, errs := runWithin(t, 20*time.Second, nil, args...)
			want := fmt.Sprintf(core.MsgRequestTooLargeFormat, size)
			if code != 1 || !strings.Contains(out, `"too_large"`) || !strings.Contains(out, want) {
				t.Errorf("%q (%d bytes): exit %d, %.300s (stderr %q); want 1, too_large: %q", args, size, code, out, errs, want)
			}
		}
	}
}
