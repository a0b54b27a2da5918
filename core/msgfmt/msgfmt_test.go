package msgfmt

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

var (
	intValues = []int64{0, 1, -1, 7, 9, 10, -10, 99, 100, 1 << 20, 1<<31 - 1, -1 << 31, 1<<53 + 1,
		math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	strValues = []string{"", "a", "%", "%d", "%s", "%%", "%!d(MISSING)", "é", "日本語", "\x00", "\xff", "{observation}", "a b\nc", strings.Repeat("x", 300)}
	literals  = []string{"", "x", " at offset ", "é", "{", "}", "'", "\"", "\n", "100", "!", "(MISSING)", "(", ")"}
)

// randomFormat is a format of literals, %%, and verbs, and arguments for it
// (an int, an int64 or a string per verb, as the verb takes).
func randomFormat(r *rand.Rand) (string, []any) {
	var f strings.Builder
	var args []any
	for range r.IntN(8) {
		switch r.IntN(4) {
		case 0:
			f.WriteString("%%")
		case 1:
			f.WriteString("%d")
			n := intValues[r.IntN(len(intValues))]
			if r.IntN(2) == 0 {
				args = append(args, int(n))
			} else {
				args = append(args, n)
			}
		case 2:
			f.WriteString("%s")
			args = append(args, strValues[r.IntN(len(strValues))])
		default:
			f.WriteString(literals[r.IntN(len(literals))])
		}
	}
	return f.String(), args
}

func TestSprintfIsFmt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		format, args := randomFormat(r)
		if got, want := Sprintf(format, args...), fmt.Sprintf(format, args...); got != want {
			t.Fatalf("Sprintf(%q, %#v) = %q, fmt.Sprintf %q", format, args, got, want)
		}
	}
}

// TestSprintfMarksAsFmt: a string for %d, an integer for %s, and a verb
// without an argument are marked as fmt marks them.
func TestSprintfMarksAsFmt(t *testing.T) {
	cases := []struct {
		format string
		args   []any
	}{
		{"%d", []any{"x"}}, {"%s", []any{5}}, {"%s", []any{int64(-5)}}, {"a %d b", nil}, {"%s %s", []any{"x"}},
		{"%d%%", []any{"é"}}, {"", nil}, {"100%%", nil},
	}
	for _, c := range cases {
		if got, want := Sprintf(c.format, c.args...), fmt.Sprintf(c.format, c.args...); got != want {
			t.Errorf("Sprintf(%q, %#v) = %q, fmt.Sprintf %q", c.format, c.args, got, want)
		}
	}
}

// TestSplit: the pieces and verbs of a format put back together with the
// arguments are the format's text; other verbs are refused.
func TestSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		format, args := randomFormat(r)
		pieces, verbs, err := Split(format)
		if err != nil || len(pieces) != len(verbs)+1 || len(verbs) != len(args) {
			t.Fatalf("Split(%q) = %q, %q, %v", format, pieces, verbs, err)
		}
		var b strings.Builder
		for i, v := range verbs {
			b.WriteString(pieces[i])
			b.WriteString(fmt.Sprintf("%"+string(rune(v)), args[i]))
		}
		b.WriteString(pieces[len(verbs)])
		if want := fmt.Sprintf(format, args...); b.String() != want {
			t.Fatalf("Split(%q) put back is %q, fmt.Sprintf %q", format, b.String(), want)
		}
	}
	for _, bad := range []string{"%", "a %", "%v", "%x", "%5d", "%-s", "%%%"} {
		if _, _, err := Split(bad); err == nil {
			t.Errorf("Split(%q) accepted a verb other than %%d, %%s, %%%%", bad)
		}
	}
}
