package core_test

import (
	"testing"

	"github.com/polyloop/assembly/core"
)

// TestDecodeRequestEmptyArrays: DecodeRequest gives an empty array on the
// wire as an empty slice, never nil, at every level (the decoder cuts its
// slices from a scratch's arenas, which start nil).
func TestDecodeRequestEmptyArrays(t *testing.T) {
	for name, b := range map[string]string{
		"run_messages":  "\x83\xa1v\x01\xacrun_messages\x90\xb4observation_template\xad{observation}",
		"goal_messages": "\x83\xa1v\x01\xadgoal_messages\x90\xb4observation_template\xad{observation}",
		"steps":         "\x83\xa1v\x01\xa5steps\x90\xb4observation_template\xad{observation}",
		"content":       "\x83\xa1v\x01\xacrun_messages\x91\x82\xa4role\xa4user\xa7content\x90\xb4observation_template\xad{observation}",
		"entries":       "\x83\xa1v\x01\xaainjections\x81\xa1c\x90\xb4observation_template\xad{observation}",
	} {
		r, err := core.DecodeRequest([]byte(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var isNil bool
		switch name {
		case "run_messages":
			isNil = r.RunMessages == nil
		case "goal_messages":
			isNil = r.GoalMessages == nil
		case "steps":
			isNil = r.Steps == nil
		case "content":
			isNil = r.RunMessages[0].Content == nil
		case "entries":
			isNil = r.Injections["c"] == nil
		}
		if isNil {
			t.Errorf("%s: an empty array decoded as nil", name)
		}
	}
}

// TestDecodeRequestInjections: DecodeRequest gives injections {} as an
// empty map, an absent key as nil, and every channel of a request with its
// entries, with few channels and past the few the decoder scans before it
// keeps a map; a channel sent twice is a duplicate_key at its second
// occurrence, whether among the first channels or past them.
func TestDecodeRequestInjections(t *testing.T) {
	const tmpl = "\xb4observation_template\xad{observation}"
	r, err := core.DecodeRequest([]byte("\x82\xaainjections\x80" + tmpl))
	if err != nil {
		t.Fatal(err)
	}
	if r.Injections == nil || len(r.Injections) != 0 {
		t.Fatalf("injections {}: %v; want an empty map", r.Injections)
	}
	if r, err = core.DecodeRequest([]byte("\x81" + tmpl)); err != nil || r.Injections != nil {
		t.Fatalf("no injections: %v; want nil", err)
	}
	const entry = "\x91\x82\xa8entry_id\xa1e\xa7content\xa1x"
	for _, n := range []int{1, 2, 8, 9, 10, 14} {
		chans := ""
		for i := range n {
			chans += "\xa1" + string(rune('a'+i)) + entry
		}
		r, err := core.DecodeRequest([]byte("\x82\xaainjections" + string([]byte{byte(0x80 | n)}) + chans + tmpl))
		if err != nil || len(r.Injections) != n {
			t.Fatalf("%d channels: %d decoded, %v", n, len(r.Injections), err)
		}
		for i := range n {
			if e := r.Injections[string(rune('a'+i))]; len(e) != 1 || e[0] != (core.Injection{EntryID: "e", Content: "x"}) {
				t.Fatalf("%d channels: channel %c decoded as %v", n, 'a'+i, e)
			}
		}
		for _, again := range []int{0, n - 1} { // the first channel again, the last one again
			ch := string(rune('a' + again))
			_, err := core.DecodeRequest([]byte("\x82\xaainjections" + string([]byte{byte(0x80 | (n + 1))}) + chans + "\xa1" + ch + entry + tmpl))
			if e, ok := err.(*core.Error); !ok || e.Code != core.CodeDuplicateKey || e.Path != `injections["`+ch+`"]` {
				t.Fatalf("%d channels and %s again: %v; want duplicate_key at injections[%q]", n, ch, err, ch)
			}
		}
	}
}
