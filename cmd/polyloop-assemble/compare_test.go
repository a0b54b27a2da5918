package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyloop/assembly/wirejson"
)

func mustMsgpack(t *testing.T, text string) []byte {
	t.Helper()
	b, err := wirejson.ToMsgpack(nil, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The compare subcommand (docs/SPEC.md §7.9): exit 0 identical, 1 different,
// 2 error; JSON lines picked by FILE#N; msgpack files; the text view.

const cmpReq = `{"v":1,"run_messages":[{"role":"system","content":[{"type":"text","text":"Be careful."}]}],` +
	`"steps":[{"raw_output":"ls","observation":"a.txt"}],"observation_template":"Obs: {observation}"}`

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompareSubcommand(t *testing.T) {
	a := writeFile(t, "a.json", cmpReq)
	b := writeFile(t, "b.json", strings.Replace(cmpReq, "a.txt", "ab.txt", 1))
	lines := writeFile(t, "ab.jsonl", cmpReq+"\n"+strings.Replace(cmpReq, "a.txt", "ab.txt", 1)+"\n")
	code, out, _ := runCLI(t, nil, "compare", a, b)
	var ans map[string]any
	if err := json.Unmarshal([]byte(out), &ans); err != nil || code != 1 {
		t.Fatalf("exit %d, %q", code, out)
	}
	d := ans["first_difference"].(map[string]any)
	// "Obs: a" is common: the difference is at code point 6 of message 2, step 0.
	if d["message"] != 2.0 || d["char"] != 6.0 || d["segment"] != "history" || d["step"] != 0.0 || ans["cacheable_prefix_chars"] != 11.0+2+6 {
		t.Fatalf("answer %s", out)
	}
	if code, out, _ := runCLI(t, nil, "compare", a, lines+"#1"); code != 0 || !strings.HasPrefix(out, `{"identical":true`) {
		t.Fatalf("line 1 against its file: exit %d, %s", code, out)
	}
	if code, out, _ := runCLI(t, nil, "compare", "--out", "text", lines+"#2", a); code != 1 || !strings.Contains(out, "message 2, character 6 (text, history step 0)") {
		t.Fatalf("text: exit %d, %s", code, out)
	}
	msgpack := writeFile(t, "a.msgpack", string(mustMsgpack(t, cmpReq)))
	if code, out, _ := runCLI(t, nil, "compare", msgpack, a); code != 0 {
		t.Fatalf("msgpack against JSON: exit %d, %s", code, out)
	}
	if code, out, _ := runCLI(t, nil, "compare", writeFile(t, "bad.json", `{"v":2}`), a); code != 2 || !strings.Contains(out, `"path":"a.v"`) {
		t.Fatalf("an invalid side: exit %d, %s", code, out)
	}
	if code, _, errText := runCLI(t, nil, "compare", a, lines+"#3"); code != 2 || !strings.Contains(errText, "no line 3") {
		t.Fatalf("a missing line: exit %d, %s", code, errText)
	}
	if code, _, _ := runCLI(t, nil, "compare", a); code != 2 {
		t.Fatalf("one input: exit %d", code)
	}
	for name, text := range map[string]string{"empty.json": "", "blank.json": " \r\n\t\n"} {
		code, out, errText := runCLI(t, nil, "compare", a, writeFile(t, name, text))
		if code != 2 || out != "" || !strings.Contains(errText, "B: it is empty; give a request or a recorded message list") {
			t.Fatalf("%s: exit %d, %q, %q", name, code, out, errText)
		}
	}
	bom := writeFile(t, "bom.json", "\ufeff"+cmpReq)
	if code, out, _ := runCLI(t, nil, "compare", a, bom); code != 2 || !strings.Contains(out, `invalid JSON at byte 0: unexpected character '\\ufeff'`) || !strings.Contains(out, `"path":"b"`) {
		t.Fatalf("a file with a BOM: exit %d, %s", code, out)
	}
	two := writeFile(t, "two.msgpack", string(append(mustMsgpack(t, cmpReq), 0x90)))
	if code, out, _ := runCLI(t, nil, "compare", two, a); code != 2 || !strings.Contains(out, `this side's bytes go on past its msgpack value`) || !strings.Contains(out, `"path":"a"`) {
		t.Fatalf("two msgpack values in one side: exit %d, %s", code, out)
	}
}
