package abi

import "testing"

// The set of docs/SPEC.md §7.8's invisible characters, against code points
// named one by one (an independent list, not the table's ranges).
func TestInvisible(t *testing.T) {
	marked := []rune{0x00, 0x07, 0x0B, 0x0D, 0x1B, 0x1F, 0x7F, 0x85, 0x9B, 0x9F, 0xA0, 0xAD, 0x061C,
		0x2000, 0x2007, 0x200A, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2028, 0x2029,
		0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x202F, 0x2060, 0x2066, 0x2067, 0x2068, 0x2069,
		0x3000, 0xFEFF}
	plain := []rune{'\n', '\t', ' ', 'a', '~', 0xA1, 0xE9, 0x2010, 0x2027, 0x2030, 0x2065, 0x2070, 0x3001,
		0xFEFE, 0xFFFD, 0x1F600, 0x10FFFF}
	for _, c := range marked {
		if !Invisible(c) {
			t.Errorf("U+%04X should be marked", c)
		}
	}
	for _, c := range plain {
		if Invisible(c) {
			t.Errorf("U+%04X should not be marked", c)
		}
	}
	for i, r := range InvisibleRanges {
		if r[0] > r[1] || i > 0 && InvisibleRanges[i-1][1] >= r[0] {
			t.Errorf("range %d (%X..%X) is not ascending and disjoint", i, r[0], r[1])
		}
	}
}
