package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestCacheExampleRun: the run the docs use (examples/caching/run.jsonl,
// twelve calls of one run, its memory entry edited at call 6) and its usage
// log (usage.jsonl: Anthropic's usage, nothing read at calls 0, 6 and 9)
// give the report they were made for: one break, injections_changed at
// call 6 (prefix_break), a write_only at call 9 (nothing read, 383 tokens
// written again: the prefix was kept), hits elsewhere; the
// text table shows each call's cached_tokens as the log holds them.
func TestCacheExampleRun(t *testing.T) {
	code, out, errs := runCLI(t, nil, "cache", exRun, "--usage", exUsage)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Calls []struct {
			Break *struct{ Segment, Cause string }
			Usage struct {
				Cached int64 `json:"cached_tokens"`
				Class  string
			}
		}
		Totals struct{ Breaks int }
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Calls) != 12 {
		t.Fatalf("%v: %.300s", err, out)
	}
	read := []int64{0, 77, 118, 146, 208, 225, 0, 304, 338, 0, 386, 406} // usage.jsonl's cache_read_input_tokens
	for i, c := range r.Calls {
		class := map[int]string{0: "first", 6: "prefix_break", 9: "write_only"}[i]
		if class == "" {
			class = "hit"
		}
		if c.Usage.Class != class || c.Usage.Cached != read[i] || (c.Break != nil) != (i == 6) {
			t.Errorf("call %d: %+v, break %+v; want %s, %d cached tokens, a break only at call 6", i, c.Usage, c.Break, class, read[i])
		}
	}
	if b := r.Calls[6].Break; r.Totals.Breaks != 1 || b == nil || b.Segment != "injections" || b.Cause != "injections_changed" {
		t.Errorf("breaks %d, call 6's %+v", r.Totals.Breaks, r.Calls[6].Break)
	}
	code, text, errs := runCLI(t, nil, "cache", exRun, "--usage", exUsage, "--out", "text")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if code != 0 || len(lines) != 14 {
		t.Fatalf("text: exit %d, %s, %d lines:\n%s", code, errs, len(lines), text)
	}
	if !strings.Contains(lines[0], "cached tokens") {
		t.Errorf("head: %q", lines[0])
	}
	for i, want := range map[int]string{
		2:  ` 77  usage: hit$`,
		7:  ` 0  injections: injections_changed at message 1, char 29: "\." → " and ISO dates\."; usage: prefix_break$`,
		10: ` 0  usage: write_only$`,
		12: ` 406  usage: hit$`,
	} {
		if !regexp.MustCompile(want).MatchString(lines[i]) {
			t.Errorf("line %d: %q, want it to match %q", i, lines[i], want)
		}
	}
	if !strings.HasPrefix(lines[13], "12 calls (0 errors), 1 break, 2 stable prefixes: ") {
		t.Errorf("totals: %q", lines[13])
	}
	// Without usage the column is blank and no line ends in spaces.
	_, text, _ = runCLI(t, nil, "cache", exRun, "--out", "text")
	if strings.Contains(text, " \n") || strings.Contains(text, "usage:") {
		t.Errorf("without usage:\n%s", text)
	}
}
