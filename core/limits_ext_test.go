package core_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/limitreq"
	"github.com/polyloop/assembly/internal/testing/vectors"
)

// maxErrorBytes is the most an error response may take (docs/SPEC.md §6): a
// message and a path quote at most 256 code points of a value or key.
const maxErrorBytes = 4096

// Every error response is a few KB, whatever the size of the offending
// value: the bounded-resources cases at 4 MiB, hostile templates, and every error
// vector. Before the excerpt rule a 4 MiB bad role gave a 24 MiB response.
func TestErrorsAreSmall(t *testing.T) {
	for _, c := range limitreq.Cases(4<<20, 4<<20) {
		if c.Code == "" {
			continue
		}
		resp := core.AssembleBytes(c.Request)
		_, err := core.DecodeResponse(resp)
		e, ok := err.(*core.Error)
		if !ok || e.Code != c.Code || e.Path != c.Path {
			t.Fatalf("%s: got %v, want %s at %.80q", c.Name, err, c.Code, c.Path)
		}
		if len(resp) > maxErrorBytes {
			t.Errorf("%s: a %d-byte request gives a %d-byte error response, over %d", c.Name, len(c.Request), len(resp), maxErrorBytes)
		}
	}
	big := strings.Repeat("\x01", 1<<20)
	for _, tmpl := range []string{
		"{" + big + "}",                                       // unknown field name
		"{observation." + big + "}",                           // attribute (GAP)
		"{observation[" + big + "]}",                          // index (GAP)
		"{observation:" + big + "}",                           // invalid spec, quoted whole and from the bad position
		"{observation:" + strings.Repeat("0", 1<<20) + "5x!}", // leading zeros, then junk
		"{0" + strings.Repeat("0", 1<<20) + "}",               // positional field
	} {
		resp := core.AssembleBytes(core.EncodeRequest(&core.Request{ObservationTemplate: tmpl}))
		_, err := core.DecodeResponse(resp)
		if e, ok := err.(*core.Error); !ok || e.Code != core.CodeInvalidTemplate {
			t.Fatalf("template %.40q…: got %v, want invalid_template", tmpl, err)
		}
		if len(resp) > maxErrorBytes {
			t.Errorf("template %.40q…: a %d-byte error response", tmpl, len(resp))
		}
	}
	cases, err := vectors.Load("../testdata/vectors")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.Error != nil {
			if resp := core.AssembleBytes(c.Request); len(resp) > maxErrorBytes {
				t.Errorf("vector %s: a %d-byte error response", c.Name, len(resp))
			}
		}
	}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Parsing a template allocates little beyond the template (docs/SPEC.md §4):
// no rune copy (4 bytes per code point) and no literal copy unless escaped
// braces join pieces. Before, a template took 8-11 times its size.
func TestTemplateParseMemory(t *testing.T) {
	n := 8 << 20
	for _, c := range []struct {
		name  string
		tmpl  string
		bound float64 // allocated bytes per template byte
	}{
		{"plain text", "{observation}" + strings.Repeat("abcdefgh é ", n/12), 0.05},
		{"escaped braces", "{observation}" + strings.Repeat("ab {{cd}} ", n/10), 1.05},
		{"many fields", strings.Repeat("{observation:.0}{observation:>5}x", n/33), 2.0},
		{"long spec", "{observation:" + strings.Repeat("0", n) + "5}", 0.05},
	} {
		var err *core.Error
		got := allocated(func() { _, err = core.ParseTemplate(c.tmpl) })
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if per := float64(got) / float64(len(c.tmpl)); per > c.bound {
			t.Errorf("%s: parsing a %d-byte template allocated %d bytes (%.2f per byte, bound %.2f)", c.name, len(c.tmpl), got, per, c.bound)
		}
	}
}
