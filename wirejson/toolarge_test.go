package wirejson_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/wirejson"
)

// TestTextOverTheLimitIsTooLarge: a JSON text longer than msgpack can count
// (4 GiB − 1 bytes; lowered here to 100) is too_large at "" with the
// message the bindings give a text of its size, from Request and from
// AppendAssemble; a text of exactly the limit is read.
func TestTextOverTheLimitIsTooLarge(t *testing.T) {
	const limit = 100
	defer wirejson.SetMaxTextBytes(limit)()
	ok := `{"observation_template": "{observation}"` + strings.Repeat(" ", limit-41) + "}"
	if len(ok) != limit {
		t.Fatalf("the text is %d bytes, not %d", len(ok), limit)
	}
	if _, e := wirejson.Request(nil, []byte(ok)); e != nil {
		t.Fatalf("a text of %d bytes: %v", limit, e)
	}
	over := []byte(ok + " ")
	want := fmt.Sprintf(core.MsgRequestTooLargeFormat, limit+1)
	if _, e := wirejson.Request(nil, over); e == nil || e.Code != core.CodeTooLarge || e.Path != "" || e.Message != want {
		t.Fatalf("a text of %d bytes: %v; want too_large at \"\": %s", limit+1, e, want)
	}
	_, err := core.DecodeResponse(wirejson.AppendAssemble(nil, over))
	if e, ok := err.(*core.Error); !ok || e.Code != core.CodeTooLarge || e.Path != "" || e.Message != want {
		t.Fatalf("AppendAssemble of a text of %d bytes: %v; want too_large at \"\": %s", limit+1, err, want)
	}
}
