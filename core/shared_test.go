package core_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/internal/testing/randreq"
	"github.com/polyloop/assembly/internal/testing/vectors"
)

// The assemble_shared answer (docs/SPEC.md §7.11), against the assemble
// response: the request's texts numbered here, as the spec says, from the
// request read in its own order with the msgp library; the answer's shared
// texts put back; the result must equal the response, every key.

// requestTexts numbers the texts of request as §7.11 does; nil when the
// request cannot be read so (the test then only compares error answers).
func requestTexts(b []byte) []string {
	var run, inj, goal, steps []string
	n, b, err := msgp.ReadMapHeaderBytes(b)
	if err != nil {
		return nil
	}
	blocks := func(v any) (out []string) {
		for _, m := range v.([]any) {
			for _, blk := range m.(map[string]any)["content"].([]any) {
				out = append(out, blk.(map[string]any)["text"].(string))
			}
		}
		return out
	}
	for range n {
		var key string
		if key, b, err = msgp.ReadStringBytes(b); err != nil {
			return nil
		}
		if key == "injections" && msgp.NextType(b) == msgp.MapType {
			var nc uint32
			nc, b, _ = msgp.ReadMapHeaderBytes(b)
			for range nc {
				_, b, _ = msgp.ReadStringBytes(b)
				var v any
				if v, b, err = msgp.ReadIntfBytes(b); err != nil {
					return nil
				}
				for _, e := range v.([]any) {
					inj = append(inj, e.(map[string]any)["content"].(string))
				}
			}
			continue
		}
		var v any
		if v, b, err = msgp.ReadIntfBytes(b); err != nil {
			return nil
		}
		switch key {
		case "run_messages":
			run = blocks(v)
		case "goal_messages":
			goal = blocks(v)
		case "steps":
			for _, s := range v.([]any) {
				m := s.(map[string]any)
				steps = append(steps, m["raw_output"].(string), m["observation"].(string))
			}
		}
	}
	return append(append(append(append([]string{}, run...), inj...), goal...), steps...)
}

// unshare puts the request's texts back into a decoded shared answer.
func unshare(t *testing.T, answer any, texts []string) {
	t.Helper()
	text := func(v any) string {
		if ext, ok := v.(*msgp.RawExtension); ok {
			if ext.Type != core.ExtRequestText || len(ext.Data) != 4 {
				t.Fatalf("an ext value that is not a shared text: %+v", ext)
			}
			k := int(ext.Data[0])<<24 | int(ext.Data[1])<<16 | int(ext.Data[2])<<8 | int(ext.Data[3])
			return texts[k]
		}
		return v.(string)
	}
	m, ok := answer.(map[string]any)
	if !ok || m["ok"] != true {
		return
	}
	for _, msg := range m["messages"].([]any) {
		for _, blk := range msg.(map[string]any)["content"].([]any) {
			b := blk.(map[string]any)
			if pieces, ok := b["text"].([]any); ok {
				if len(pieces) < 2 {
					t.Fatalf("a rendering of %d pieces", len(pieces))
				}
				s := ""
				for _, p := range pieces {
					s += text(p)
				}
				b["text"] = s
			} else {
				b["text"] = text(b["text"])
			}
		}
	}
}

func checkShared(t *testing.T, label string, req []byte) (shared bool) {
	t.Helper()
	want, _, err := msgp.ReadIntfBytes(core.AssembleBytes(req))
	if err != nil {
		t.Fatal(err)
	}
	ans := core.AppendAssembleSharedBytes([]byte("kept"), req)
	if string(ans[:4]) != "kept" {
		t.Fatalf("%s: dst's bytes not kept", label)
	}
	got, rest, err := msgp.ReadIntfBytes(ans[4:])
	if err != nil || len(rest) != 0 {
		t.Fatalf("%s: the answer is not one msgpack value: %v\n%q\n%q", label, err, ans[4:min(len(ans), 400)], core.AssembleBytes(req)[:min(len(ans)-4, 400)])
	}
	if m, _ := got.(map[string]any); m["ok"] == true {
		texts := requestTexts(req)
		if texts == nil {
			t.Fatalf("%s: an ok answer to a request the test cannot read", label)
		}
		unshare(t, got, texts)
		shared = true
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: the shared answer, its texts put back, is not the response:\n got %v\nwant %v", label, got, want)
	}
	return shared
}

func TestSharedTexts(t *testing.T) {
	cases, err := vectors.Load("../testdata/vectors")
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for _, c := range cases {
		if checkShared(t, c.File+"/"+c.Name, c.Request) {
			ok++
		}
	}
	r := rand.New(rand.NewPCG(2026, 12))
	for i := range 3000 {
		if checkShared(t, "random request", randreq.Bytes(r)) {
			ok++
		}
		_ = i
	}
	if ok < 100 {
		t.Fatalf("only %d ok answers: the test compares too little", ok)
	}
}

// TestSharedTextsOrder: the injections' texts are numbered in the
// request's channel order, not in the response's (sorted) order, and keys
// in any order number the texts alike.
func TestSharedTextsOrder(t *testing.T) {
	entry := func(b []byte, id, content string) []byte {
		b = msgp.AppendMapHeader(b, 2)
		b = msgp.AppendString(msgp.AppendString(b, "entry_id"), id)
		return msgp.AppendString(msgp.AppendString(b, "content"), content)
	}
	b := msgp.AppendMapHeader(nil, 3)
	b = msgp.AppendArrayHeader(msgp.AppendString(b, "steps"), 1)
	b = msgp.AppendMapHeader(b, 2)
	b = msgp.AppendString(msgp.AppendString(b, "raw_output"), "raw")
	b = msgp.AppendString(msgp.AppendString(b, "observation"), "obs")
	b = msgp.AppendMapHeader(msgp.AppendString(b, "injections"), 2)
	b = entry(msgp.AppendArrayHeader(msgp.AppendString(b, "zeta"), 1), "z", "from zeta")
	b = entry(msgp.AppendArrayHeader(msgp.AppendString(b, "alpha"), 1), "a", "from alpha")
	b = msgp.AppendString(msgp.AppendString(b, "observation_template"), "<{observation}>{observation}")
	checkShared(t, "channels out of order", b)
	got, _, _ := msgp.ReadIntfBytes(core.AppendAssembleSharedBytes(nil, b))
	msgs := got.(map[string]any)["messages"].([]any)
	first := msgs[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(*msgp.RawExtension)
	if first.Data[3] != 1 { // alpha comes first in the prompt, second in the request
		t.Errorf("alpha's entry is text %d, want 1", first.Data[3])
	}
	obs := msgs[3].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].([]any)
	if len(obs) != 4 || obs[0] != "<" || obs[2] != ">" {
		t.Errorf("the rendering's pieces: %v", obs)
	}
}

// TestSharedTextSections: the answer numbers the request's texts section by
// section in the order of abi.SharedTextSections, the table the hosts'
// codecs are generated from (each section holds one text here, the
// steps' two: raw_output, observation).
func TestSharedTextSections(t *testing.T) {
	req := core.EncodeRequest(&core.Request{
		RunMessages:         []core.Message{{Role: "user", Content: []core.Block{{Type: "text", Text: "run"}}}},
		Injections:          map[string][]core.Injection{"ch": {{EntryID: "e", Content: "injection"}}},
		GoalMessages:        []core.Message{{Role: "user", Content: []core.Block{{Type: "text", Text: "goal"}}}},
		Steps:               []core.Step{{RawOutput: "raw", Observation: "obs"}},
		ObservationTemplate: "{observation}",
	})
	count := map[string]int{"run_messages": 1, "injections": 1, "goal_messages": 1, "steps": 2}
	first := map[string]int{}
	k := 0
	for _, s := range abi.SharedTextSections {
		first[s] = k
		k += count[s]
	}
	if k != 5 {
		t.Fatalf("abi.SharedTextSections %v does not name the request's four text sections", abi.SharedTextSections)
	}
	want := []int{first["run_messages"], first["injections"], first["goal_messages"], first["steps"], first["steps"] + 1}
	got, _, err := msgp.ReadIntfBytes(core.AppendAssembleSharedBytes(nil, req))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range got.(map[string]any)["messages"].([]any) {
		ref, ok := m.(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(*msgp.RawExtension)
		if !ok || ref.Type != abi.ExtRequestText || int(ref.Data[3]) != want[i] {
			t.Errorf("message %d: %v, want request text %d", i, m, want[i])
		}
	}
}
