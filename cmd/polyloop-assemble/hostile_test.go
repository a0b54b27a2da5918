package main

import (
	"encoding/json"
	"testing"
)

// TestKeyTwiceInBodyAndUsage: a JSON body or usage line holding a key twice
// (JSON text can, a host's dict cannot) is refused, duplicate_key at the
// key, on every engine: the body's the export's error, the usage's that
// call's invalid_usage (testdata/hostile-vectors hold the same in msgpack).
func TestKeyTwiceInBodyAndUsage(t *testing.T) {
	req := writeFile(t, "r.json", runReq(0))
	body := writeFile(t, "body.json", `{"model":"a","x":{"k":1},"model":"b"}`)
	usage := writeFile(t, "usage.jsonl", `{"cache_read_input_tokens":5,"cache_read_input_tokens":7}`+"\n")
	for _, eng := range cliEngines() {
		code, out, errs := runCLI(t, nil, append([]string{"export", "--provider", "anthropic", "--body", body, req}, eng...)...)
		var a struct{ Error *struct{ Code, Path string } }
		if json.Unmarshal([]byte(out), &a) != nil || code != 1 || a.Error == nil ||
			*a.Error != (struct{ Code, Path string }{"duplicate_key", "options.body.model"}) {
			t.Errorf("%s export: exit %d, %.300s (%s); want duplicate_key at options.body.model", eng[1], code, out, errs)
		}
		code, out, errs = runCLI(t, nil, append([]string{"cache", "--usage", usage, req}, eng...)...)
		r := parseReport(t, eng[1], out)
		if code != 0 || len(r.Calls) != 1 || r.Calls[0].Usage == nil || r.Calls[0].Usage.Class != "invalid_usage" ||
			r.Calls[0].Usage.Error == nil || r.Calls[0].Usage.Error.Code != "duplicate_key" ||
			r.Calls[0].Usage.Error.Path != "usage.cache_read_input_tokens" {
			t.Errorf("%s cache: exit %d, %.500s (%s); want call 0 invalid_usage, duplicate_key at usage.cache_read_input_tokens", eng[1], code, out, errs)
		}
	}
}
