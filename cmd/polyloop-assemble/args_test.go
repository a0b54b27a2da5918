package main

import (
	"strings"
	"testing"
)

// The command line as people type it (issue 45): flags before or after the
// operands on every command, --help, -h and help COMMAND print that
// command's own usage on stdout (exit 0), a wrong flag prints it on stderr
// (exit 2).

const (
	exReact    = "../../examples/react.json"
	exCompareA = "../../examples/compare-a.json"
	exCompareB = "../../examples/compare-b.json"
	exRun      = "../../examples/caching/run.jsonl"
	exUsage    = "../../examples/caching/usage.jsonl"
)

// TestFlagsAfterOperands: each command line, flags first, is answered as
// the same line with the flags after the operands (and around them).
func TestFlagsAfterOperands(t *testing.T) {
	body := writeFile(t, "body.json", `{"model":"claude-x","max_tokens":1024}`)
	for _, tc := range []struct {
		name          string
		first, others [][]string
		want          int
	}{
		{"main", [][]string{{"--out", "text", "--engine=native", exReact}},
			[][]string{{exReact, "--out", "text", "--engine=native"}, {"--out", "text", exReact, "--engine", "native"}}, 0},
		{"main batch", [][]string{{"--batch", "--jobs", "2", "../../examples/trajectories.jsonl"}},
			[][]string{{"../../examples/trajectories.jsonl", "--batch", "--jobs", "2"}}, 1},
		{"compare", [][]string{{"compare", "--out", "text", exCompareA, exCompareB}},
			[][]string{{"compare", exCompareA, exCompareB, "--out", "text"}, {"compare", exCompareA, "--out", "text", exCompareB}}, 1},
		{"cache", [][]string{{"cache", "--out", "text", "--usage", exUsage, exRun}},
			[][]string{{"cache", exRun, "--usage", exUsage, "--out", "text"}, {"cache", "--usage", exUsage, exRun, "--out=text"}}, 0},
		{"export", [][]string{{"export", "--provider", "anthropic", "--body", body, "--ttl", "1h", exReact}},
			[][]string{{"export", exReact, "--provider", "anthropic", "--body", body, "--ttl", "1h"}, {"export", "--provider", "anthropic", exReact, "--ttl=1h", "--body", body}}, 0},
	} {
		code, want, errs := runCLI(t, nil, tc.first[0]...)
		if code != tc.want || want == "" {
			t.Fatalf("%s %q: exit %d (want %d), stderr %q", tc.name, tc.first[0], code, tc.want, errs)
		}
		for _, args := range tc.others {
			if code, out, errs := runCLI(t, nil, args...); code != tc.want || out != want {
				t.Errorf("%s %q: exit %d (want %d), stderr %.300q, output differs from flags first:\n%.300s\nwant\n%.300s", tc.name, args, code, tc.want, errs, out, want)
			}
		}
	}
}

// TestDoubleDashEndsFlags: after "--" an argument that looks like a flag
// is an operand; before it, a lone "-" is stdin.
func TestDoubleDashEndsFlags(t *testing.T) {
	req := writeFile(t, "r.json", cmpReq)
	_, want, _ := runCLI(t, nil, "export", "--provider", "openai-chat", req)
	if code, out, errs := runCLI(t, []byte(cmpReq), "export", "-", "--provider", "openai-chat"); code != 0 || out != want {
		t.Errorf("export - --provider: exit %d %q: %.200s", code, errs, out)
	}
	// "--out" after "--" is a file name (that does not exist), not a flag.
	code, out, errs := runCLI(t, nil, "cache", "--", "--out")
	if code != 2 || out != "" || !strings.Contains(errs, "--out: no such file") {
		t.Errorf("cache -- --out: exit %d, %q, %q", code, out, errs)
	}
	// A flag whose value is missing is an error, not "--" taken as its value.
	code, _, errs = runCLI(t, nil, "compare", exCompareA, exCompareB, "--out")
	if code != 2 || !strings.Contains(errs, "flag needs an argument: -out") {
		t.Errorf("compare A B --out: exit %d, %q", code, errs)
	}
}

// TestHelpPrintsTheCommandsUsage: --help, -h and help COMMAND print the
// command's own usage (its first line names it) on stdout, exit 0.
func TestHelpPrintsTheCommandsUsage(t *testing.T) {
	heads := map[string]string{
		"":        "usage: polyloop-assemble [flags] [FILE]\n",
		"compare": "usage: polyloop-assemble compare [",
		"cache":   "usage: polyloop-assemble cache [",
		"export":  "usage: polyloop-assemble export --provider ",
	}
	for cmd, head := range heads {
		var lines [][]string
		for _, h := range []string{"--help", "-h", "-help"} {
			lines = append(lines, strings.Fields(cmd+" "+h), strings.Fields(cmd+" "+exReact+" "+h))
		}
		lines = append(lines, strings.Fields("help "+cmd))
		for _, args := range lines {
			code, out, errs := runCLI(t, nil, args...)
			if code != 0 || errs != "" || !strings.HasPrefix(out, head) {
				t.Errorf("%q: exit %d, stderr %q, stdout %.80q; want 0, none, %q…", args, code, errs, out, head)
			}
		}
	}
	if code, out, errs := runCLI(t, nil, "help", "nope"); code != 2 || out != "" || !strings.Contains(errs, `no command "nope"`) {
		t.Errorf("help nope: exit %d, %q, %q", code, out, errs)
	}
}

// TestWrongFlagPrintsTheCommandsUsage: an unknown flag, a bad value or a
// wrong number of operands is exit 2 with the command's own usage on
// stderr, nothing on stdout.
func TestWrongFlagPrintsTheCommandsUsage(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		msg, usage string
	}{
		{[]string{"--bogus"}, "polyloop-assemble: flag provided but not defined: -bogus", "usage: polyloop-assemble [flags]"},
		{[]string{"compare", exCompareA, exCompareB, "--bogus"}, "polyloop-assemble compare: flag provided but not defined: -bogus", "usage: polyloop-assemble compare ["},
		{[]string{"compare", exCompareA}, "polyloop-assemble compare: give two inputs", "usage: polyloop-assemble compare ["},
		{[]string{"cache", exRun, "--out", "msgpack"}, `polyloop-assemble cache: --out must be json or text, not "msgpack"`, "usage: polyloop-assemble cache ["},
		{[]string{"cache", exRun, "--bogus"}, "polyloop-assemble cache: flag provided but not defined: -bogus", "usage: polyloop-assemble cache ["},
		{[]string{"export", exReact, "--bogus"}, "polyloop-assemble export: flag provided but not defined: -bogus", "usage: polyloop-assemble export --provider"},
		{[]string{"export", exReact}, "polyloop-assemble export: give --provider", "usage: polyloop-assemble export --provider"},
		{[]string{"export", exReact, exReact, "--provider", "anthropic"}, "polyloop-assemble export: give one request file", "usage: polyloop-assemble export --provider"},
	} {
		code, out, errs := runCLI(t, nil, tc.args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, tc.msg) || !strings.Contains(errs, "\n\n"+tc.usage) {
			t.Errorf("%q: exit %d, stdout %q, stderr %.300q; want 2, none, %q… then %q…", tc.args, code, out, errs, tc.msg, tc.usage)
		}
	}
}
