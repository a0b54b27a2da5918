package core

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTemplate checks the engine's invariants on arbitrary templates and
// observations (the CPython differential checks the values):
//   - no panic;
//   - ValidateTemplate and ParseTemplate agree (ValidateTemplate's path is
//     observation_template), and a rejection has the right
//     code, an empty path, an offset inside the template named by its message,
//     and the GAP prefix exactly on GAP classes;
//   - an accepted template renders valid UTF-8 for a valid observation, and
//     renderSize, AppendRender and Render agree (for invalid UTF-8
//     observations, outside the contract, in bytes and without a panic).
//
// Seed corpus: testdata/fuzz/FuzzTemplate/. Run:
//
//	go test -run '^$' -fuzz '^FuzzTemplate$' -fuzztime 1m ./core/
func FuzzTemplate(f *testing.F) {
	f.Fuzz(func(t *testing.T, tmpl, obs string) {
		tp, err, gap := parseTemplate(tmpl)
		verr := ValidateTemplate(tmpl)
		if (verr == nil) != (err == nil) {
			t.Fatalf("ValidateTemplate %v, ParseTemplate %v", verr, err)
		}
		if err != nil && utf8.ValidString(tmpl) {
			// ValidateTemplate reports the error where a request holds the template.
			want := *err
			want.Path = "observation_template"
			if e, ok := verr.(*Error); !ok || *e != want {
				t.Fatalf("ValidateTemplate %#v, want %#v", verr, want)
			}
		}
		if _, perr := ParseTemplate(tmpl); (perr == nil) != (err == nil) || perr != nil && *perr != *err {
			t.Fatalf("ParseTemplate %v, parseTemplate %v", perr, err)
		}
		if err != nil {
			if tp != nil {
				t.Fatal("a rejected template came with a *Template")
			}
			wantCode := CodeInvalidTemplate
			if !utf8.ValidString(tmpl) {
				wantCode = CodeInvalidUTF8
			}
			if err.Code != wantCode || err.Path != "" {
				t.Fatalf("error %#v: want code %s and an empty path", err, wantCode)
			}
			if n := utf8.RuneCountInString(tmpl); err.Offset < 0 || err.Offset > n {
				t.Fatalf("offset %d outside the template of %d code points: %v", err.Offset, n, err)
			}
			if !strings.Contains(err.Message, "offset "+itoa(err.Offset)) {
				t.Fatalf("message %q does not name offset %d", err.Message, err.Offset)
			}
			if (gap != gapNone && gap != gapNoField) != strings.HasPrefix(err.Message, gapPrefix) {
				t.Fatalf("GAP class %q with message %q", gap, err.Message)
			}
			return
		}
		if gap != gapNone {
			t.Fatalf("accepted with GAP class %q", gap)
		}
		check := func(obs string, countChars bool) string {
			out := tp.Render(obs)
			nb, nc := tp.renderSize(obs, -1)
			// Invalid bytes of two pastes of obs can join into one code
			// point, so code points are compared only for valid UTF-8.
			if nb != len(out) || countChars && nc != int64(utf8.RuneCountInString(out)) {
				t.Fatalf("renderSize(%q) = %d, %d; Render wrote %d bytes, %d code points", obs, nb, nc, len(out), utf8.RuneCountInString(out))
			}
			if app := tp.AppendRender([]byte("x"), obs); string(app[1:]) != out || app[0] != 'x' {
				t.Fatalf("AppendRender differs from Render")
			}
			return out
		}
		valid := strings.ToValidUTF8(obs, "\uFFFD")
		if out := check(valid, true); !utf8.ValidString(out) {
			t.Fatalf("Render(%q) is not valid UTF-8: %q", valid, out)
		}
		if valid != obs {
			check(obs, false)
		}
	})
}
