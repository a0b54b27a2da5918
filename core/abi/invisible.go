package abi

// InvisibleRanges are the code points a view of a prompt marks instead of
// showing raw (docs/SPEC.md §7.8): characters that render as nothing, as
// ordinary space, or that reorder or hide the text around them, so a reader
// would not see the bytes the model gets. Each range is [first, last],
// inclusive, ascending. Newline and tab are layout and are not in the set.
// The CLI's --out text and the JavaScript preview (bindings/js, through the
// generated INVISIBLE_RANGES) both mark exactly these.
var InvisibleRanges = [][2]rune{
	{0x00, 0x08},     // C0 controls before tab
	{0x0B, 0x1F},     // C0 controls after newline (VT, FF, CR, ESC...)
	{0x7F, 0x9F},     // DEL and the C1 controls
	{0xA0, 0xA0},     // no-break space
	{0xAD, 0xAD},     // soft hyphen
	{0x034F, 0x034F}, // combining grapheme joiner
	{0x061C, 0x061C}, // Arabic letter mark
	{0x115F, 0x1160}, // Hangul choseong and jungseong fillers
	{0x180E, 0x180E}, // Mongolian vowel separator
	{0x2000, 0x200F}, // en quad .. hair space, ZWSP, ZWNJ, ZWJ, LRM, RLM
	{0x2028, 0x202F}, // line and paragraph separators, LRE..RLO, narrow NBSP
	{0x205F, 0x2064}, // medium math space, word joiner, invisible operators
	{0x2066, 0x206F}, // LRI, RLI, FSI, PDI and the deprecated format controls
	{0x3000, 0x3000}, // ideographic space
	{0x3164, 0x3164}, // Hangul filler
	{0xFEFF, 0xFEFF}, // byte-order mark, zero-width no-break space
	{0xFFA0, 0xFFA0}, // halfwidth Hangul filler
	{0xFFF9, 0xFFFB}, // interlinear annotation controls
}

// Invisible reports whether c is in InvisibleRanges.
func Invisible(c rune) bool {
	if c >= 0x20 && c < 0x7F {
		return false
	}
	for _, r := range InvisibleRanges {
		if c < r[0] {
			return false
		}
		if c <= r[1] {
			return true
		}
	}
	return false
}
