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
