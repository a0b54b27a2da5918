package main

import (
	"fmt"
	"strings"
	"unicode"
)

// invisiblePath is the generated table of the code points a view marks.
const invisiblePath = "core/abi/invisible_table.go"

// invisible reports whether a view marks c (docs/SPEC.md §7.8): the
// Unicode properties that make a character render as nothing, as plain
// space, or act on the text around it — control (Cc) and format (Cf)
// characters, the separators (Zs other than U+0020, and the line and
// paragraph separators U+2028 and U+2029, Zl and Zp),
// Other_Default_Ignorable_Code_Point (the rest of
// Default_Ignorable_Code_Point: fillers, unassigned tag and variation
// ranges) and Variation_Selector — but for the exceptions: LF, which is
// layout, and the Prepended_Concatenation_Mark characters, format
// characters drawn as visible signs (U+0600 ARABIC NUMBER SIGN…).
func invisible(c rune) bool {
	if c == '\n' || unicode.Is(unicode.Prepended_Concatenation_Mark, c) {
		return false
	}
	return unicode.In(c, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) ||
		unicode.Is(unicode.Zs, c) && c != ' '
}

// invisibleRanges is the set of invisible as [first, last] ranges.
func invisibleRanges() (out [][2]rune) {
	for c := rune(0); c <= unicode.MaxRune; c++ {
		if !invisible(c) {
			continue
		}
		if n := len(out); n > 0 && out[n-1][1] == c-1 {
			out[n-1][1] = c
		} else {
			out = append(out, [2]rune{c, c})
		}
	}
	return out
}

// goInvisible writes core/abi/invisible_table.go.
func goInvisible() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n\npackage abi\n\n", header)
	fmt.Fprintf(&b, "// UnicodeVersion is the Unicode version of the properties InvisibleRanges\n// is made of (Go's unicode package).\nconst UnicodeVersion = %q\n\n", unicode.Version)
	b.WriteString("// InvisibleRanges are the code points a view marks (invisible.go).\nvar InvisibleRanges = [][2]rune{\n")
	for _, r := range invisibleRanges() {
		fmt.Fprintf(&b, "\t{0x%04X, 0x%04X},\n", r[0], r[1])
	}
	b.WriteString("}\n")
	return []byte(b.String())
}
