package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/limitreq"
)

// The cache and export subcommands read their inputs within the request
// limit (docs/SPEC.md §4), as the main command does: a request or usage
// line over it is counted, not kept, and is that call's own verdict, its
// true size quoted; the other calls are answered.

type reportCall struct {
	Previous *int
	Error    *struct{ Code, Message, Path string }
	Usage    *struct {
		Class string
		Error *struct{ Code, Message, Path string }
	}
}

type report struct {
	Calls  []reportCall
	Totals struct{ Calls, Errors int }
	Error  *struct{ Code, Message, Path string }
}

func parseReport(t *testing.T, name, out string) report {
	t.Helper()
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%s: not JSON (%v): %.500s", name, err, out)
	}
	return r
}

// runReq is a request of the cache test's run (its first step's output k).
func runReq(k int) string {
	return fmt.Sprintf(`{"run_messages":[{"role":"system","content":[{"type":"text","text":"Be careful."}]}],`+
		`"steps":[{"raw_output":"step %d","observation":"r"}],"observation_template":"{observation}"}`, k)
}

func TestCacheRequestOverLimit(t *testing.T) {
	const limit = 1000
	withLimit(t, limit)
	long := paddedJSON(5000) // a valid request, over the limit
	jsonl := runReq(0) + "\n" + long + "\n" + runReq(0) + "\n"
	stream := append(append(mustMsgpack(t, runReq(0)), sizedMsgpack(t, 3000)...), mustMsgpack(t, runReq(0))...)
	file := writeFile(t, "run.jsonl", jsonl)
	for _, eng := range cliEngines() {
		for _, tc := range []struct {
			name  string
			stdin []byte
			args  []string
			size  int
		}{
			{"json lines", []byte(jsonl), nil, 5000},
			{"json file", nil, []string{file}, 5000},
			{"msgpack stream", stream, nil, 3000},
		} {
			name := eng[1] + " " + tc.name
			code, out, errs := runCLI(t, tc.stdin, append(append([]string{"cache"}, eng...), tc.args...)...)
			if code != 0 {
				t.Errorf("%s: exit %d (%s)", name, code, errs)
			}
			r := parseReport(t, name, out)
			if len(r.Calls) != 3 || r.Totals.Calls != 2 || r.Totals.Errors != 1 {
				t.Fatalf("%s: %d calls, totals %+v, want 3 calls (2 valid, 1 error): %.500s", name, len(r.Calls), r.Totals, out)
			}
			want := fmt.Sprintf("the request is %d bytes, over the 1 GiB limit; split it into smaller requests", tc.size)
			if e := r.Calls[1].Error; e == nil || e.Code != "too_large" || e.Path != "" || e.Message != want {
				t.Errorf("%s: call 1 is %+v; want too_large at \"\": %q", name, e, want)
			}
			if r.Calls[0].Error != nil || r.Calls[2].Error != nil || r.Calls[2].Previous == nil || *r.Calls[2].Previous != 0 {
				t.Errorf("%s: calls 0 and 2 should be answered, 2 after 0: %.500s", name, out)
			}
		}
	}
}

func TestCacheUsageLineOverLimit(t *testing.T) {
	const limit = 1000
	withLimit(t, limit)
	reqs := writeFile(t, "run.jsonl", runReq(0)+"\n"+runReq(0)+"\n"+runReq(0)+"\n"+runReq(0)+"\n")
	longUsage := `{"cache_read_input_tokens":1` + strings.Repeat(" ", 2000) + `}`
	usage := writeFile(t, "usage.jsonl", `{"cache_read_input_tokens":0}`+"\n"+longUsage+"\n"+`{"cache_read_input_tokens":`+"\n"+`{"cache_read_input_tokens":7}`+"\n")
	for _, eng := range cliEngines() {
		code, out, errs := runCLI(t, nil, append(append([]string{"cache"}, eng...), "--usage", usage, reqs)...)
		if code != 0 {
			t.Fatalf("%s: exit %d (%s)", eng[1], code, errs)
		}
		r := parseReport(t, eng[1], out)
		if len(r.Calls) != 4 {
			t.Fatalf("%s: %d calls: %.500s", eng[1], len(r.Calls), out)
		}
		if u := r.Calls[1].Usage; u == nil || u.Class != "invalid_usage" || u.Error == nil || u.Error.Code != "too_large" ||
			u.Error.Path != "usage" || !strings.Contains(u.Error.Message, fmt.Sprintf("line 2 of --usage is %d bytes", len(longUsage))) {
			t.Errorf("%s: call 1's usage is %+v; want invalid_usage, too_large at usage, quoting %d bytes", eng[1], u, len(longUsage))
		}
		if u := r.Calls[2].Usage; u == nil || u.Class != "invalid_usage" || u.Error == nil || u.Error.Code != "malformed_request" ||
			!strings.Contains(u.Error.Message, "line 3 of --usage is not JSON") {
			t.Errorf("%s: call 2's usage is %+v; want invalid_usage, malformed_request (line 3 is not JSON)", eng[1], u)
		}
		if u := r.Calls[3].Usage; u == nil || u.Class != "hit" || u.Error != nil {
			t.Errorf("%s: call 3's usage is %+v; want hit", eng[1], u)
		}
	}
}

// TestCacheRequestsOverLimitTogether: requests each within the limit but
// over it together make arguments no engine takes: the report is
// too_large, quoting every byte read.
func TestCacheRequestsOverLimitTogether(t *testing.T) {
	const limit = 1000
	withLimit(t, limit)
	in := paddedJSON(600) + "\n" + paddedJSON(600) + "\n"
	code, out, _ := runCLI(t, []byte(in), "cache")
	r := parseReport(t, "together", out)
	want := fmt.Sprintf(core.MsgRequestTooLargeFormat, len(in))
	if code != 1 || r.Error == nil || r.Error.Code != "too_large" || r.Error.Message != want {
		t.Errorf("exit %d: %.300s; want 1, too_large: %q", code, out, want)
	}
}

func TestExportInputOverLimit(t *testing.T) {
	const limit = 1000
	withLimit(t, limit)
	big := paddedJSON(3000)
	file := writeFile(t, "big.json", big)
	small := writeFile(t, "r.json", okJSON)
	body := writeFile(t, "body.json", `{"model":"x"`+strings.Repeat(" ", 1500)+`}`)
	for _, tc := range []struct {
		name       string
		stdin      []byte
		args       []string
		path, want string
	}{
		{"stdin", []byte(big), nil, "", fmt.Sprintf(core.MsgRequestTooLargeFormat, 3000)},
		{"file", nil, []string{file}, "", fmt.Sprintf(core.MsgRequestTooLargeFormat, 3000)},
		{"body", nil, []string{"--body", body, small}, "options.body", "the body is 1513 bytes"},
	} {
		code, out, errs := runCLI(t, tc.stdin, append([]string{"export", "--provider", "anthropic"}, tc.args...)...)
		var r struct {
			Error *struct{ Code, Message, Path string }
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || code != 1 || r.Error == nil || r.Error.Code != "too_large" ||
			r.Error.Path != tc.path || !strings.HasPrefix(r.Error.Message, tc.want) {
			t.Errorf("%s: exit %d %q, %.300s; want 1, too_large at %q: %q", tc.name, code, errs, out, tc.path, tc.want)
		}
	}
}

// TestCacheAndExportInBoundedMemory: a 2 GiB request line through cache
// (between two valid ones) and export, at the 1 MiB test limit, under an
// address-space limit smaller than the line: counted, not kept.
func TestCacheAndExportInBoundedMemory(t *testing.T) {
	if _, err := os.Stat(limitreq.GNUTime); err != nil {
		t.Skip("needs GNU time to measure the peak RSS")
	}
	if testing.Short() {
		t.Skip("writes 4 GiB through pipes")
	}
	var size int64
	r := runCommand(t, []string{"cache"}, func(w io.Writer) (err error) {
		fmt.Fprintln(w, runReq(0))
		if size, err = limitreq.LongJSONLine(w, 2048); err == nil {
			_, err = fmt.Fprintln(w, runReq(0))
		}
		return err
	})
	t.Logf("cache: %v", r)
	rep := parseReport(t, "cache", r.Stdout)
	if r.Code != 0 || r.Crashed() || len(rep.Calls) != 3 || rep.Calls[1].Error == nil ||
		rep.Calls[1].Error.Message != fmt.Sprintf(core.MsgRequestTooLargeFormat, size) || rep.Calls[2].Error != nil {
		t.Errorf("cache: exit %d, %.500s (stderr %.300s); want call 1 too_large for %d bytes", r.Code, r.Stdout, r.Stderr, size)
	}
	r = runCommand(t, []string{"export", "--provider", "openai-chat"}, func(w io.Writer) (err error) {
		size, err = limitreq.LongJSONLine(w, 2048) // its newline too is the request's
		return err
	})
	t.Logf("export: %v", r)
	if want := fmt.Sprintf(core.MsgRequestTooLargeFormat, size+1); r.Code != 1 || r.Crashed() || !strings.Contains(r.Stdout, want) {
		t.Errorf("export: exit %d, %.300s (stderr %.300s); want too_large: %q", r.Code, r.Stdout, r.Stderr, want)
	}
}

// runCommand runs this test binary as the command (native, args first: a
// subcommand) at the 1 MiB test limit under the address-space limit.
func runCommand(t *testing.T, args []string, feed func(io.Writer) error) limitreq.Run {
	t.Helper()
	env := []string{"POLYLOOP_CLI_AS_COMMAND=1", "POLYLOOP_CLI_TEST_LIMIT=" + strconv.Itoa(1<<20)}
	r, err := limitreq.RunBounded(append([]string{os.Args[0]}, args...), env, memoryLimitKB, feed)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestExportBodyDepth: a body field nested 64 deep is kept whole, its
// innermost value too; one level more is the core's malformed_request at
// that value's path, the verdict of every host (the JSON's stand-ins for
// deep values begin past the depth the core reads a body to).
func TestExportBodyDepth(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + `"leaf"` + strings.Repeat("]", n) }
	req := writeFile(t, "r.json", cmpReq)
	for _, eng := range cliEngines() {
		body := writeFile(t, "b64.json", `{"x":`+nest(64)+`}`)
		code, out, errs := runCLI(t, nil, append(append([]string{"export"}, eng...), "--provider", "openai-chat", "--body", body, req)...)
		if code != 0 || !strings.Contains(out, `"x":`+nest(64)) {
			t.Errorf("%s, 64 deep: exit %d (%s), %.200s; want the body field whole", eng[1], code, errs, out)
		}
		for _, n := range []int{65, 70, 100} {
			body = writeFile(t, "deep.json", `{"x":`+nest(n)+`}`)
			code, out, _ = runCLI(t, nil, append(append([]string{"export"}, eng...), "--provider", "openai-chat", "--body", body, req)...)
			var r struct {
				Error *struct{ Code, Message, Path string }
			}
			json.Unmarshal([]byte(out), &r)
			if wantPath := "options.body.x" + strings.Repeat("[0]", 65); code != 1 || r.Error == nil || r.Error.Code != "malformed_request" ||
				r.Error.Path != wantPath || r.Error.Message != "this value nests deeper than 64 levels" {
				t.Errorf("%s, %d deep: exit %d, %.300s; want 1, malformed_request at the value 65 deep", eng[1], n, code, out)
			}
		}
	}
}

// TestCacheUsageDepth: a usage line nested 65 deep is that call's
// invalid_usage at the value 65 deep, as on every host; 64 deep is read.
func TestCacheUsageDepth(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + "0" + strings.Repeat("]", n) }
	reqs := writeFile(t, "run.jsonl", runReq(0)+"\n"+runReq(0)+"\n"+runReq(0)+"\n")
	usage := writeFile(t, "usage.jsonl", "null\n"+`{"x":`+nest(64)+"}\n"+`{"x":`+nest(65)+"}\n")
	for _, eng := range cliEngines() {
		code, out, errs := runCLI(t, nil, append(append([]string{"cache"}, eng...), "--usage", usage, reqs)...)
		r := parseReport(t, eng[1], out)
		if code != 0 || len(r.Calls) != 3 {
			t.Fatalf("%s: exit %d (%s): %.300s", eng[1], code, errs, out)
		}
		if u := r.Calls[1].Usage; u == nil || u.Class != "unknown_usage" {
			t.Errorf("%s: 64 deep: %+v; want unknown_usage (no field of a known shape)", eng[1], u)
		}
		if u := r.Calls[2].Usage; u == nil || u.Class != "invalid_usage" || u.Error == nil || u.Error.Path != "usage.x"+strings.Repeat("[0]", 65) ||
			u.Error.Message != "this value nests deeper than 64 levels" {
			t.Errorf("%s: 65 deep: %+v; want invalid_usage at the value 65 deep", eng[1], u)
		}
	}
}
