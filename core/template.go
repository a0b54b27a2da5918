package core

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/polyloop/assembly/core/msgfmt"
)

// The observation template (docs/SPEC.md §5).
//
// render(t, obs) equals CPython 3.12's t.format(observation=obs) byte for byte.
// The parser is a port of CPython's MarkupIterator_next and parse_field
// (Objects/stringlib/unicode_format.h), field_name_split and do_conversion;
// the format spec follows Python/formatter_unicode.c (template_spec.go) and the
// conversions Objects/unicodeobject.c (repr.go). It accepts a template only if
// CPython formats it without raising for every str observation, and renders it
// exactly as CPython does. It is stricter than CPython in the cases marked
// GAP below (and in docs/SPEC.md's rule that an observation field must exist),
// each with its own message starting with gapPrefix.
//
// Offsets in messages and in Error.Offset count code points from the start of
// the template.

// gapClass names a template CPython accepts that this engine rejects on
// purpose (docs/SPEC.md §5). The differential test checks that every rejection of a
// template CPython accepts is one of these.
type gapClass uint8

const (
	gapNone      gapClass = iota
	gapAttribute          // {observation.x}
	gapIndex              // {observation[0]}
	gapNested             // a brace inside a format spec, {observation:{w}}
	gapWidth              // a width above maxFieldWidth
	gapNoField            // no {observation} field at all (docs/SPEC.md's own rule)
)

var gapClassNames = [...]string{"", "attribute", "index", "nested", "width", "nofield"}

func (g gapClass) String() string { return gapClassNames[g] }

// gapPrefix starts the message of every GAP rejection.
const gapPrefix = "not supported (stricter than Python's str.format): "

// conversion is the !s, !r or !a of a field; !s (and a NUL conversion
// character, which CPython treats as no conversion) is convNone.
type conversion uint8

const (
	convNone conversion = iota
	convRepr
	convASCII
)

// fspec is what a replacement field does to the observation: its
// conversion and format spec.
type fspec struct {
	conv  conversion
	fill  string // UTF-8 of the fill code point
	align byte   // '<', '>' or '^'
	width int64  // -1 when absent
	prec  int64  // -1 when absent
	// formatted is true when a width or precision may change the value.
	formatted bool
}

// silent reports whether the field renders nothing whatever the
// observation: a precision of 0 and no width to pad.
func (f *fspec) silent() bool { return f.prec == 0 && f.width <= 0 }

// tfield is one replacement field and the literal text before it.
type tfield struct {
	lit  string // literal text before the field, braces unescaped
	kind int32  // index in Template.kinds
}

// fkind is one distinct fspec of a template and how many fields have it:
// the size of a rendering is computed once per kind, not once per field
// (docs/SPEC.md §4: a template of 100,000 fields over 10,000 steps).
type fkind struct {
	fspec
	count int
}

// Template is a parsed, validated observation template. It is immutable and
// safe for concurrent use.
type Template struct {
	src string
	// fields are the fields that can render something, in order; a silent
	// field ({observation:.0}) is dropped at parse time and its literal
	// joined to the next one. Rendering costs O(len(fields)) plus what it
	// writes, and every field in it writes at least one code point for a
	// non-empty observation.
	fields    []tfield
	kinds     []fkind // the distinct fspecs of fields
	tail      string  // literal text after the last field
	tailChars int64
	litBytes  int   // UTF-8 length of all literal text
	litChars  int64 // code points of all literal text
	// plain is true when every field is a bare {observation}: the rendering
	// is the literals with obs pasted between them.
	plain bool
}

// tmplErr builds an invalid_template error at the code-point offset off.
func tmplErr(off int, format string, args ...any) *Error {
	return &Error{Code: CodeInvalidTemplate, Message: msgfmt.Sprintf(format, args...), Offset: off}
}

// ParseTemplate validates t as a CPython str.format template whose only field
// is observation. On failure the error has CodeInvalidTemplate, an empty Path
// and the code-point Offset of the problem (CodeInvalidUTF8 if t is not valid
// UTF-8).
func ParseTemplate(t string) (*Template, *Error) {
	tp, err, _ := parseTemplate(t)
	return tp, err
}

// ValidateTemplate reports whether t is a valid observation template: nil,
// or the *Error that assembling a request holding t would give, as every
// host's validate function reports it: CodeInvalidTemplate (CodeInvalidUTF8
// if t is not valid UTF-8, then Offset is -1), the Path
// "observation_template", a message saying what is wrong and what to do, and
// the code-point Offset of the problem.
//
// A template is CPython str.format text with at least one {observation}
// field. A field may carry a conversion (!s, !r, !a) and a format spec
// [[fill]align][0][width][.precision][s], where widths count code points and
// are at most 1,048,576. Other braces must be doubled ({{ and }}). Attribute
// access, indexing and nested fields in a format spec are not supported.
func ValidateTemplate(t string) error {
	sc := getScratch()
	defer sc.release()
	if _, err := checkRequest(&Request{ObservationTemplate: t}, sc); err != nil {
		return err
	}
	return nil
}

// parseTemplate parses src and, on failure, also says whether the rejection
// is one of the documented GAP classes.
func parseTemplate(src string) (*Template, *Error, gapClass) {
	if !utf8.ValidString(src) {
		bad := 0
		for i := 0; i < len(src); {
			r, w := utf8.DecodeRuneInString(src[i:])
			if r == utf8.RuneError && w == 1 {
				break
			}
			i += w
			bad++
		}
		return nil, &Error{Code: CodeInvalidUTF8, Offset: bad, Message: msgfmt.Sprintf(
			"the template is not valid UTF-8 at offset %d; send it as valid UTF-8 text", bad)}, gapNone
	}
	p := parser{s: src, kindIdx: map[fspec]int32{}}
	t := &Template{src: src, plain: true}
	if err, gap := p.parse(t); err != nil {
		return nil, err, gap
	}
	for i := range t.fields {
		t.litBytes += len(t.fields[i].lit)
		t.litChars += int64(utf8.RuneCountInString(t.fields[i].lit))
	}
	for i := range t.kinds {
		if t.kinds[i].conv != convNone || t.kinds[i].formatted {
			t.plain = false
		}
	}
	t.litBytes += len(t.tail)
	t.litChars += t.tailChars
	return t, nil, gapNone
}

// parser walks the template's bytes; positions are byte offsets, turned
// into code-point offsets (cp, counted on from the last one asked) for
// messages and format specs. '{', '}', '[', ']', '!'
// and ':' are ASCII, so a byte equal to one of them is that character, never
// part of a longer UTF-8 sequence. The template is never converted to runes
// and its literal text is kept as slices of it (copied only where an escaped
// brace joins two pieces): parsing needs memory proportional to the
// template with a small constant (docs/SPEC.md §4).
type parser struct {
	s string
	// segs are the pieces of literal text gathered since the last field
	// that renders something (a silent field's literal joins the next one).
	segs []litSeg
	// kindIdx indexes Template.kinds by fspec.
	kindIdx map[fspec]int32
	// escapedOpen is the byte offset of the first "{{", for the no-field
	// message.
	escapedOpen int
	// cpByte and cpN: the byte offset cp was asked last and its code-point
	// offset.
	cpByte, cpN int
}

// litSeg is literal text s[start:end] holding esc escaped braces ({{ or }}).
type litSeg struct{ start, end, esc int }

// cp returns the code-point offset of the byte offset i. It counts on from
// the offset asked last, so that asking in increasing order (once per field)
// costs one pass over the template in all.
func (p *parser) cp(i int) int {
	if i < p.cpByte {
		p.cpByte, p.cpN = 0, 0
	}
	p.cpN += utf8.RuneCountInString(p.s[p.cpByte:i])
	p.cpByte = i
	return p.cpN
}

// takeLit returns the literal text gathered, braces unescaped, and starts
// anew: a slice of the template when it is one piece without escapes, else
// one string of the exact size.
func (p *parser) takeLit() string {
	defer func() { p.segs = p.segs[:0] }()
	switch {
	case len(p.segs) == 0:
		return ""
	case len(p.segs) == 1 && p.segs[0].esc == 0:
		return p.s[p.segs[0].start:p.segs[0].end]
	}
	n := 0
	for _, g := range p.segs {
		n += g.end - g.start - g.esc
	}
	var b strings.Builder
	b.Grow(n)
	for _, g := range p.segs {
		piece := p.s[g.start:g.end]
		for k := 0; k < g.esc; k++ {
			j := strings.IndexAny(piece, "{}")
			b.WriteString(piece[:j+1])
			piece = piece[j+2:]
		}
		b.WriteString(piece)
	}
	return b.String()
}

// intern returns the index of fs in t.kinds, adding it if new, and counts
// one more field of that kind.
func (p *parser) intern(t *Template, fs fspec) int32 {
	k, ok := p.kindIdx[fs]
	if !ok {
		k = int32(len(t.kinds))
		p.kindIdx[fs] = k
		t.kinds = append(t.kinds, fkind{fspec: fs})
	}
	t.kinds[k].count++
	return k
}

// parse is CPython's do_markup loop over MarkupIterator_next.
func (p *parser) parse(t *Template) (*Error, gapClass) {
	s := p.s
	n := len(s)
	p.escapedOpen = -1
	// Every field opens with a '{' that is not part of "{{": room for them
	// all at once (a bound for any template that parses).
	if nf := strings.Count(s, "{") - 2*strings.Count(s, "{{"); nf > 0 {
		t.fields = make([]tfield, 0, min(nf, n/13+1))
	}
	nfields := 0
	i := 0
	for i < n {
		start := i
		j, esc := p.scanLit(i)
		if j > start {
			p.segs = append(p.segs, litSeg{start, j, esc})
		}
		if j == n {
			break
		}
		if s[j] == '}' {
			return tmplErr(p.cp(j), "single '}' at offset %d; write '}}' for a literal '}'", p.cp(j)), gapNone
		}
		if j+1 == n {
			return tmplErr(p.cp(j), "single '{' at offset %d at the end of the template; write '{{' for a literal '{', or a whole field {observation}", p.cp(j)), gapNone
		}
		var fs fspec
		next, err, gap := p.field(j, &fs)
		if err != nil {
			return err, gap
		}
		nfields++
		if !fs.silent() {
			t.fields = append(t.fields, tfield{lit: p.takeLit(), kind: p.intern(t, fs)})
		}
		i = next
	}
	t.tail = p.takeLit()
	t.tailChars = int64(utf8.RuneCountInString(t.tail))
	if nfields == 0 {
		return p.noField(), gapNoField
	}
	return nil, gapNone
}

// scanLit scans literal text from i, through escaped braces, up to a field
// or the end: it returns where the literal ends and how many escaped braces
// it holds.
func (p *parser) scanLit(i int) (end, esc int) {
	s, j := p.s, i
	for {
		k := strings.IndexAny(s[j:], "{}")
		if k < 0 {
			return len(s), esc
		}
		j += k
		if j+1 < len(s) && s[j+1] == s[j] {
			if s[j] == '{' && p.escapedOpen < 0 {
				p.escapedOpen = j
			}
			esc++
			j += 2
			continue
		}
		return j, esc
	}
}

// noField is the error of a template without fields. GAP (docs/SPEC.md §5
// no-field rule): CPython formats such a template fine, but the observation would
// silently vanish.
func (p *parser) noField() *Error {
	if p.escapedOpen >= 0 {
		off := p.cp(p.escapedOpen)
		return tmplErr(off, "the template has no {observation} field, so the observation would never appear; '{{' at offset %d is an escaped literal brace, write {observation} with single braces", off)
	}
	return tmplErr(0, "the template has no {observation} field (offset 0), so the observation would never appear; add {observation} where it belongs")
}

// field parses the replacement field whose '{' is at byte offset open, as
// CPython's parse_field, then checks it as output_markup would use it (field
// name, conversion, format spec). It returns the byte offset after the
// closing '}'.
func (p *parser) field(open int, f *fspec) (int, *Error, gapClass) {
	i, c, err := p.fieldName(open)
	if err != nil {
		return 0, err, gapNone
	}
	name := p.s[open+1 : i-1]
	fp := fieldParts{convPos: -1, specStart: -1, specEnd: -1, nested: -1}
	if c == '!' || c == ':' {
		if i, err = p.convAndSpec(i, c, open, &fp); err != nil {
			return 0, err, gapNone
		}
	}
	if err, gap := p.checkName(name, open+1, open); err != nil {
		return 0, err, gap
	}
	if err := p.setConv(f, fp.conv, fp.convPos); err != nil {
		return 0, err, gapNone
	}
	f.fill, f.align, f.width, f.prec = " ", '<', -1, -1
	if fp.specStart < 0 {
		return i, nil, gapNone
	}
	if fp.nested >= 0 {
		// GAP: CPython expands fields nested in a format spec
		// ({observation:{w}}); this engine has only one value, so a nested
		// field could only be the observation used as a spec.
		return 0, tmplErr(p.cp(fp.nested), gapPrefix+"a brace at offset %d inside the format spec of the field opened at offset %d (nested fields); write the width and precision as plain numbers", p.cp(fp.nested), p.cp(open)), gapNested
	}
	fs, err, gap := parseStrSpec(p.s[fp.specStart:fp.specEnd], p.cp(fp.specStart))
	if err != nil {
		return 0, err, gap
	}
	f.fill = string(fs.fill)
	f.align = fs.align
	f.width = fs.width
	f.prec = fs.prec
	f.formatted = fs.width > 0 || fs.prec >= 0
	return i, nil, gapNone
}

// fieldParts are the positions field finds after the field name: the
// conversion character and where it is, the format spec's bounds and the
// first '{' inside it (-1 when absent).
type fieldParts struct {
	conv                                rune
	convPos, specStart, specEnd, nested int
}

// fieldName scans the field name of the field opened at open, up to the
// '}', ':' or '!' that ends it: it returns the index after that character
// and the character.
func (p *parser) fieldName(open int) (int, byte, *Error) {
	s, n := p.s, len(p.s)
	for i := open + 1; i < n; {
		c := s[i]
		i++
		if c == '{' {
			return 0, 0, tmplErr(p.cp(i-1), "unexpected '{' at offset %d inside the field opened at offset %d; a field is written {observation}, and '{{' writes a literal '{'", p.cp(i-1), p.cp(open))
		}
		if c == '[' {
			for i < n && s[i] != ']' {
				i++
			}
			continue
		}
		if c == '}' || c == ':' || c == '!' {
			return i, c, nil
		}
	}
	return 0, 0, tmplErr(p.cp(open), "the field opened at offset %d is never closed; end it with '}' as in {observation}, or write '{{' for a literal '{'", p.cp(open))
}

// convAndSpec scans what follows the field name when c, just before i, is
// '!' (a conversion, then maybe ':' and a format spec) or ':' (a format
// spec), into fp; it returns the index after the field's closing '}'.
func (p *parser) convAndSpec(i int, c byte, open int, fp *fieldParts) (int, *Error) {
	s, n := p.s, len(p.s)
	if c == '!' {
		if i >= n {
			return 0, tmplErr(p.cp(i-1), "'!' at offset %d ends the template; a conversion is !s, !r or !a followed by '}'", p.cp(i-1))
		}
		var w int
		fp.conv, w = utf8.DecodeRuneInString(s[i:])
		fp.convPos = i
		i += w
		if fp.conv == '}' {
			// CPython reads '}' as the conversion character and then
			// raises "Unknown conversion specifier }" or "unmatched '{'".
			return 0, tmplErr(p.cp(fp.convPos-1), "missing conversion after '!' at offset %d; write !s, !r or !a before the '}'", p.cp(fp.convPos-1))
		}
		if i < n {
			c2, w := utf8.DecodeRuneInString(s[i:])
			c2Pos := i
			i += w
			if c2 == '}' {
				return i, nil
			}
			if c2 != ':' {
				return 0, tmplErr(p.cp(c2Pos), "expected ':' or '}' after the conversion at offset %d, found %s at offset %d; a conversion is one character: !s, !r or !a", p.cp(fp.convPos), quoteRune(c2), p.cp(c2Pos))
			}
		}
	}
	return p.spec(i, open, fp)
}

// spec scans a format spec from i to the '}' that balances the field's '{'.
func (p *parser) spec(i, open int, fp *fieldParts) (int, *Error) {
	s, n := p.s, len(p.s)
	fp.specStart = i
	count := 1
	for i < n {
		c := s[i]
		i++
		if c == '{' {
			if fp.nested < 0 {
				fp.nested = i - 1
			}
			count++
		} else if c == '}' {
			count--
			if count == 0 {
				fp.specEnd = i - 1
				return i, nil
			}
		}
	}
	return 0, tmplErr(p.cp(open), "the field opened at offset %d is never closed; end its format spec with '}'", p.cp(open))
}

// setConv sets f's conversion from the conversion character at convPos (0:
// none).
func (p *parser) setConv(f *fspec, conv rune, convPos int) *Error {
	switch conv {
	case 0, 's':
		// No conversion; CPython also treats a NUL conversion character as none.
		f.conv = convNone
	case 'r':
		f.conv = convRepr
	case 'a':
		f.conv = convASCII
	default:
		return tmplErr(p.cp(convPos), "unknown conversion !%s at offset %d; use !s, !r or !a", quoteConv(conv), p.cp(convPos))
	}
	return nil
}

// checkName checks a field name (at byte offset off; the field opens at
// open) as field_name_split and get_field_object would resolve it with only
// the keyword argument observation.
func (p *parser) checkName(name string, off, open int) (*Error, gapClass) {
	k := strings.IndexAny(name, ".[")
	if k < 0 {
		k = len(name)
	}
	first := name[:k]
	if first != "observation" {
		switch {
		case len(first) == 0:
			return tmplErr(p.cp(open), "empty field name in the field at offset %d ({} is a positional field); name the field {observation}, or write '{{' and '}}' for literal braces", p.cp(open)), gapNone
		case isAllDigits(first):
			return tmplErr(p.cp(off), "positional field %s at offset %d; name the field {observation}", quoteRunes(first), p.cp(off)), gapNone
		default:
			return tmplErr(p.cp(off), "unknown field name %s at offset %d; the only field is {observation} (write '{{' and '}}' for literal braces)", quoteRunes(first), p.cp(off)), gapNone
		}
	}
	if k == len(name) {
		return nil, gapNone
	}
	rest := name[k:]
	if rest[0] == '.' {
		// GAP: CPython looks up attributes of the str ({observation.upper}
		// formats a bound method's repr); this engine formats only the
		// observation itself.
		return tmplErr(p.cp(off+k), gapPrefix+"attribute access %s at offset %d; use {observation} itself", quoteRunes(rest), p.cp(off+k)), gapAttribute
	}
	// GAP: CPython indexes the str ({observation[0]} is its first character,
	// and raises IndexError for an empty observation); this engine formats
	// only the observation itself.
	return tmplErr(p.cp(off+k), gapPrefix+"indexing %s at offset %d; use {observation} itself (a precision such as {observation:.1} keeps a prefix)", quoteRunes(rest), p.cp(off+k)), gapIndex
}

func isAllDigits(s string) bool {
	for _, r := range s {
		if decimalValue(r) < 0 {
			return false
		}
	}
	return len(s) > 0
}

// quoteConv shows a conversion character for a message.
func quoteConv(r rune) string {
	if r > ' ' && r < 0x7f {
		return string(r)
	}
	q := strconv.QuoteRune(r)
	return q[1 : len(q)-1]
}

// renderSize returns the UTF-8 byte length and code-point count of
// t.format(observation=obs), given obsChars, the code points of obs, or -1
// to count them when needed. obs must be valid UTF-8. It does not allocate.
func (t *Template) renderSize(obs string, obsChars int64) (nbytes int, nchars int64) {
	nbytes, nchars = t.litBytes, t.litChars
	if t.plain {
		if obsChars < 0 {
			obsChars = countRunes(obs)
		}
		k := len(t.fields)
		return nbytes + k*len(obs), nchars + int64(k)*obsChars
	}
	var rinfo [2]reprInfo
	var have [2]bool
	for i := range t.kinds {
		f := &t.kinds[i]
		var vb int    // bytes of the value kept
		var vc int64  // code points of the value kept
		var whole int // bytes of the whole value
		var ri reprInfo
		if f.conv == convNone {
			if obsChars < 0 {
				obsChars = countRunes(obs)
			}
			vc, whole = obsChars, len(obs)
		} else {
			k := f.conv - convRepr
			if !have[k] {
				rinfo[k], have[k] = reprScan(obs, f.conv == convASCII), true
			}
			ri = rinfo[k]
			vc, whole = ri.nchars, ri.nbytes
		}
		if !f.formatted {
			nbytes += f.count * whole
			nchars += int64(f.count) * vc
			continue
		}
		keep, lpad, rpad := f.layout(vc)
		switch {
		case keep == vc:
			vb = whole
		case f.conv == convNone:
			vb = prefixBytes(obs, keep)
		default:
			vb = reprPrefixBytes(obs, f.conv == convASCII, ri.quote, keep)
		}
		pad := lpad + rpad
		nbytes += f.count * (vb + int(pad)*len(f.fill))
		nchars += int64(f.count) * (keep + pad)
	}
	return nbytes, nchars
}

// AppendRender appends t.format(observation=obs) to dst. It allocates only
// when dst must grow.
func (t *Template) AppendRender(dst []byte, obs string) []byte {
	if t.plain {
		for i := range t.fields {
			dst = append(dst, t.fields[i].lit...)
			dst = append(dst, obs...)
		}
		return append(dst, t.tail...)
	}
	obsChars := int64(-1)
	var rinfo [2]reprInfo
	var have [2]bool
	for i := range t.fields {
		dst = append(dst, t.fields[i].lit...)
		f := &t.kinds[t.fields[i].kind]
		if f.conv == convNone {
			if !f.formatted {
				dst = append(dst, obs...)
				continue
			}
			if obsChars < 0 {
				obsChars = countRunes(obs)
			}
			keep, lpad, rpad := f.layout(obsChars)
			dst = appendFill(dst, f.fill, lpad)
			if keep == obsChars {
				dst = append(dst, obs...)
			} else {
				dst = append(dst, obs[:prefixBytes(obs, keep)]...)
			}
			dst = appendFill(dst, f.fill, rpad)
			continue
		}
		k := f.conv - convRepr
		ascii := f.conv == convASCII
		if !have[k] {
			rinfo[k], have[k] = reprScan(obs, ascii), true
		}
		ri := rinfo[k]
		if !f.formatted {
			dst = reprAppend(dst, obs, ascii, ri.quote, -1)
			continue
		}
		keep, lpad, rpad := f.layout(ri.nchars)
		dst = appendFill(dst, f.fill, lpad)
		dst = reprAppend(dst, obs, ascii, ri.quote, keep)
		dst = appendFill(dst, f.fill, rpad)
	}
	return append(dst, t.tail...)
}

// Render returns t.format(observation=obs).
func (t *Template) Render(obs string) string {
	nb, _ := t.renderSize(obs, -1)
	return string(t.AppendRender(make([]byte, 0, nb), obs))
}

// layout applies the width and precision of f to a value of n code points,
// as format_string_internal and calc_padding do: keep is how many code points
// of the value are written, lpad and rpad how many fill characters go left
// and right of it (centering puts the odd one on the right).
func (f *fspec) layout(n int64) (keep, lpad, rpad int64) {
	keep = n
	if f.prec >= 0 && f.prec < n {
		keep = f.prec
	}
	if f.width > keep {
		pad := f.width - keep
		switch f.align {
		case '>':
			lpad = pad
		case '^':
			lpad = pad / 2
		}
		rpad = pad - lpad
	}
	return keep, lpad, rpad
}

// appendFill appends n copies of fill.
func appendFill(dst []byte, fill string, n int64) []byte {
	if n <= 0 {
		return dst
	}
	dst = slices.Grow(dst, int(n)*len(fill))
	if len(fill) == 1 {
		c := fill[0]
		for ; n > 0; n-- {
			dst = append(dst, c)
		}
		return dst
	}
	for ; n > 0; n-- {
		dst = append(dst, fill...)
	}
	return dst
}

// countRunes counts the code points of an observation, which the decoder has
// validated; for invalid UTF-8 (outside the contract) it is a count of
// non-continuation bytes, used alike by renderSize and AppendRender.
func countRunes(s string) int64 {
	return int64(codePoints(s))
}

// prefixBytes returns the byte length of the first k code points of s.
func prefixBytes(s string, k int64) int {
	i := 0
	for ; k > 0 && i < len(s); k-- {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return i
}
