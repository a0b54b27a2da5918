package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The cache and export subcommands: a run's report from JSON lines (with
// CRLF and a U+2028 inside a line, which splits nothing) and from a
// msgpack stream, the same answer either way; the text table; export's
// body and its errors.

func TestCacheSubcommand(t *testing.T) {
	step := func(k int) string {
		return `{"raw_output":"Thought ` + string(rune('0'+k)) + `\u2028 ok","observation":"r"}`
	}
	req := func(sys string, steps int) string {
		var s []string
		for k := range steps {
			s = append(s, step(k))
		}
		return `{"run_messages":[{"role":"system","content":[{"type":"text","text":"` + sys + `"}]}],` +
			`"steps":[` + strings.Join(s, ",") + `],"observation_template":"Obs: {observation}"}`
	}
	lines := []string{req("Be careful.", 1), req("Be careful.", 2), req("Be careful!", 3), req("Be careful!", 4)}
	jsonl := strings.ReplaceAll(strings.Join(lines, "\r\n")+"\r\n", `\u2028`, "\u2028")
	code, out, errs := runCLI(t, []byte(jsonl), "cache")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Calls []struct {
			Extends bool
			Break   *struct{ Segment, Cause string }
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Calls) != 4 {
		t.Fatalf("%v: %.300s", err, out)
	}
	if !r.Calls[1].Extends || r.Calls[2].Break == nil || r.Calls[2].Break.Cause != "run_changed" || !r.Calls[3].Extends {
		t.Errorf("calls: %+v", r.Calls)
	}
	var stream []byte
	for _, l := range lines {
		stream = append(stream, mustMsgpack(t, l)...)
	}
	if _, out2, _ := runCLI(t, stream, "cache"); out2 != out {
		t.Errorf("the msgpack stream's report differs from the JSON lines':\n%.300s\n%.300s", out2, out)
	}
	_, text, _ := runCLI(t, []byte(jsonl), "cache", "--out", "text")
	if !strings.Contains(text, "run: run_changed at message 0, char 10") || !strings.Contains(text, "4 calls (0 errors), 1 break,") {
		t.Errorf("text:\n%s", text)
	}
}

func TestExportSubcommand(t *testing.T) {
	f := writeFile(t, "r.json", cmpReq)
	body := writeFile(t, "body.json", `{"model":"claude-x","max_tokens":1024}`)
	code, out, errs := runCLI(t, nil, "export", "--provider", "anthropic", "--body", body, f)
	if code != 0 || !strings.HasPrefix(out, `{"model":"claude-x","max_tokens":1024,"system":[{"type":"text","text":"Be careful.","cache_control":{"type":"ephemeral"}}],"messages":[`) {
		t.Errorf("exit %d %s: %.300s", code, errs, out)
	}
	code, out, _ = runCLI(t, []byte(cmpReq), "export", "--provider", "openai-responses")
	if code != 0 || !strings.Contains(out, `{"role":"assistant","content":[{"type":"output_text","text":"ls"}]}`) {
		t.Errorf("exit %d: %.300s", code, out)
	}
	if code, out, _ = runCLI(t, []byte(cmpReq), "export", "--provider", "mistral"); code != 1 || !strings.Contains(out, `"path":"provider"`) {
		t.Errorf("exit %d: %.300s", code, out)
	}
	if code, _, _ = runCLI(t, []byte(cmpReq), "export"); code != 2 {
		t.Errorf("no provider: exit %d", code)
	}
}
