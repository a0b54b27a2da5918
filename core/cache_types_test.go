package core_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/wirejson"
)

// exportByHand is the export call's answer, packed by hand (tinylib/msgp).
func exportByHand(t *testing.T, req []byte, provider string, options map[string]any) []byte {
	t.Helper()
	b := msgp.AppendMapHeader(nil, 3)
	b = append(msgp.AppendString(b, "request"), req...)
	b = msgp.AppendString(msgp.AppendString(b, "provider"), provider)
	b, err := msgp.AppendIntf(msgp.AppendString(b, "options"), options)
	if err != nil {
		t.Fatal(err)
	}
	return wirejson.AppendExport(nil, b)
}

// TestExportNative: core.Export answers what the export call answers for
// the same arguments packed by hand; nil options are the defaults, the
// zero ExportOptions none; an error is the call's *core.Error.
func TestExportNative(t *testing.T) {
	req := plantedRun(30)[29]
	body := []byte("\x82\xa5model\xa1m\xaamax_tokens\x09") // {"model": "m", "max_tokens": 9}, in this order
	for _, tc := range []struct {
		name string
		opts *core.ExportOptions
		want map[string]any
	}{
		{"nil", nil, nil},
		{"defaults", ptr(core.DefaultExportOptions()), nil},
		{"zero", &core.ExportOptions{}, map[string]any{"max_breakpoints": int64(0), "lookback": int64(0)}},
		{"all", &core.ExportOptions{TTL: "1h", MaxBreakpoints: 3, Lookback: 2, CacheKey: "k", Body: body},
			map[string]any{"ttl": "1h", "max_breakpoints": int64(3), "lookback": int64(2), "prompt_cache_key": "k", "body": msgp.Raw(body)}},
	} {
		for _, provider := range []string{core.ProviderAnthropic, core.ProviderOpenAIChat, core.ProviderOpenAIResponses} {
			got, err := core.Export(req, provider, tc.opts)
			if want := exportByHand(t, req, provider, tc.want); err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s, %s: %v\n got %.200q\nwant %.200q", tc.name, provider, err, got, want)
			}
		}
	}
	if got, _ := core.Export(req, core.ProviderAnthropic, &core.ExportOptions{}); bytes.Contains(got, []byte("cache_control")) {
		t.Error("the zero options placed a breakpoint")
	}
	late := core.EncodeRequest(&core.Request{ObservationTemplate: "{observation}", GoalMessages: []core.Message{textMsg("user", "u"), textMsg("system", "s")}})
	_, err := core.Export(late, core.ProviderAnthropic, nil)
	if err == nil || err.Code != core.CodeMalformedRequest || err.Path != "request.goal_messages[1]" {
		t.Errorf("a late system message: %v", err)
	}
	if _, err := core.Export([]byte(`{"observation_template":"{observation}"}`), core.ProviderOpenAIChat, nil); err == nil || !strings.Contains(err.Message, "msgpack") {
		t.Errorf("JSON text natively: %v", err)
	}
	if _, err := core.Export(req, "openai", nil); err == nil || err.Path != "provider" {
		t.Errorf("an unknown provider: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

func textMsg(role, text string) core.Message {
	return core.Message{Role: role, Content: []core.Block{{Type: core.BlockTypeText, Text: text}}}
}
