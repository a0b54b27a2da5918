package core

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Every expected output below was printed by CPython 3.12.1 for the pair,
// t.format(observation=obs), and pasted here: a few fixed templates with one
// observation, !r and !a of a dozen quoting/escaping observations, and the
// format-spec templates crossed with four observations. The randomized version
// is the CPython differential (format_diff_test.go).
var renderCases = []struct{ tmpl, obs, want string }{
	{"{observation}", "ab'c\u00e9 \U0001f600", "ab'c\u00e9 \U0001f600"},
	{"Output:\n```\n{observation}\n```\n\n", "ab'c\u00e9 \U0001f600", "Output:\n```\nab'c\u00e9 \U0001f600\n```\n\n"},
	{"{{{observation}}}", "ab'c\u00e9 \U0001f600", "{ab'c\u00e9 \U0001f600}"},
	{"a}}b{{c{observation}", "ab'c\u00e9 \U0001f600", "a}b{cab'c\u00e9 \U0001f600"},
	{"{observation!s}", "ab'c\u00e9 \U0001f600", "ab'c\u00e9 \U0001f600"},
	{"{observation!\u0000}", "ab'c\u00e9 \U0001f600", "ab'c\u00e9 \U0001f600"},
	{"{observation!r}", "it's", "\"it's\""},
	{"{observation!r}", "say \"hi\"", "'say \"hi\"'"},
	{"{observation!r}", "both ' and \"", "'both \\' and \"'"},
	{"{observation!r}", "\\", "'\\\\'"},
	{"{observation!r}", "\t\n\u000d", "'\\t\\n\\r'"},
	{"{observation!r}", "\u0000\u001f\u007f", "'\\x00\\x1f\\x7f'"},
	{"{observation!r}", "\u0080\u009f\u00a0\u00ad", "'\\x80\\x9f\\xa0\\xad'"},
	{"{observation!r}", "\u00e9\u4e2d\U0001f600", "'\u00e9\u4e2d\U0001f600'"},
	{"{observation!r}", "\u0378\ue000\U000f0000\u2028\ufeff\U000e0001", "'\\u0378\\ue000\\U000f0000\\u2028\\ufeff\\U000e0001'"},
	{"{observation!r}", "\U0010ffff", "'\\U0010ffff'"},
	{"{observation!r}", "", "''"},
	{"{observation!r}", "e\u0301\u200b\u3000", "'e\u0301\\u200b\\u3000'"},
	{"{observation!a}", "it's", "\"it's\""},
	{"{observation!a}", "say \"hi\"", "'say \"hi\"'"},
	{"{observation!a}", "both ' and \"", "'both \\' and \"'"},
	{"{observation!a}", "\\", "'\\\\'"},
	{"{observation!a}", "\t\n\u000d", "'\\t\\n\\r'"},
	{"{observation!a}", "\u0000\u001f\u007f", "'\\x00\\x1f\\x7f'"},
	{"{observation!a}", "\u0080\u009f\u00a0\u00ad", "'\\x80\\x9f\\xa0\\xad'"},
	{"{observation!a}", "\u00e9\u4e2d\U0001f600", "'\\xe9\\u4e2d\\U0001f600'"},
	{"{observation!a}", "\u0378\ue000\U000f0000\u2028\ufeff\U000e0001", "'\\u0378\\ue000\\U000f0000\\u2028\\ufeff\\U000e0001'"},
	{"{observation!a}", "\U0010ffff", "'\\U0010ffff'"},
	{"{observation!a}", "", "''"},
	{"{observation!a}", "e\u0301\u200b\u3000", "'e\\u0301\\u200b\\u3000'"},
	{"{observation:10}", "ab", "ab        "},
	{"{observation:10}", "\u00e9\U0001f600x", "\u00e9\U0001f600x       "},
	{"{observation:10}", "it's \"q\"\n", "it's \"q\"\n "},
	{"{observation:10}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301xyz\U0001f600   "},
	{"{observation:>10}", "ab", "        ab"},
	{"{observation:>10}", "\u00e9\U0001f600x", "       \u00e9\U0001f600x"},
	{"{observation:>10}", "it's \"q\"\n", " it's \"q\"\n"},
	{"{observation:>10}", "e\u0301\u0301xyz\U0001f600", "   e\u0301\u0301xyz\U0001f600"},
	{"{observation:^10}", "ab", "    ab    "},
	{"{observation:^10}", "\u00e9\U0001f600x", "   \u00e9\U0001f600x    "},
	{"{observation:^10}", "it's \"q\"\n", "it's \"q\"\n "},
	{"{observation:^10}", "e\u0301\u0301xyz\U0001f600", " e\u0301\u0301xyz\U0001f600  "},
	{"{observation:^9}", "ab", "   ab    "},
	{"{observation:^9}", "\u00e9\U0001f600x", "   \u00e9\U0001f600x   "},
	{"{observation:^9}", "it's \"q\"\n", "it's \"q\"\n"},
	{"{observation:^9}", "e\u0301\u0301xyz\U0001f600", " e\u0301\u0301xyz\U0001f600 "},
	{"{observation:*^9}", "ab", "***ab****"},
	{"{observation:*^9}", "\u00e9\U0001f600x", "***\u00e9\U0001f600x***"},
	{"{observation:*^9}", "it's \"q\"\n", "it's \"q\"\n"},
	{"{observation:*^9}", "e\u0301\u0301xyz\U0001f600", "*e\u0301\u0301xyz\U0001f600*"},
	{"{observation:05}", "ab", "ab000"},
	{"{observation:05}", "\u00e9\U0001f600x", "\u00e9\U0001f600x00"},
	{"{observation:05}", "it's \"q\"\n", "it's \"q\"\n"},
	{"{observation:05}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301xyz\U0001f600"},
	{"{observation:>05}", "ab", "000ab"},
	{"{observation:>05}", "\u00e9\U0001f600x", "00\u00e9\U0001f600x"},
	{"{observation:>05}", "it's \"q\"\n", "it's \"q\"\n"},
	{"{observation:>05}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301xyz\U0001f600"},
	{"{observation:^05}", "ab", "0ab00"},
	{"{observation:^05}", "\u00e9\U0001f600x", "0\u00e9\U0001f600x0"},
	{"{observation:^05}", "it's \"q\"\n", "it's \"q\"\n"},
	{"{observation:^05}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301xyz\U0001f600"},
	{"{observation:<0}", "ab", "ab"},
	{"{observation:<0}", "\u00e9\U0001f600x", "\u00e9\U0001f600x"},
	{"{observation:<0}", "it's \"q\"\n", "it's \"q\"\n"},
	{"{observation:<0}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301xyz\U0001f600"},
	{"{observation:00}", "ab", "ab"},
	{"{observation:00}", "\u00e9\U0001f600x", "\u00e9\U0001f600x"},
	{"{observation:00}", "it's \"q\"\n", "it's \"q\"\n"},
	{"{observation:00}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301xyz\U0001f600"},
	{"{observation:\U0001f600^7}", "ab", "\U0001f600\U0001f600ab\U0001f600\U0001f600\U0001f600"},
	{"{observation:\U0001f600^7}", "\u00e9\U0001f600x", "\U0001f600\U0001f600\u00e9\U0001f600x\U0001f600\U0001f600"},
	{"{observation:\U0001f600^7}", "it's \"q\"\n", "it's \"q\"\n"},
	{"{observation:\U0001f600^7}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301xyz\U0001f600"},
	{"{observation:\u0000>3}", "ab", "\u0000ab"},
	{"{observation:\u0000>3}", "\u00e9\U0001f600x", "\u00e9\U0001f600x"},
	{"{observation:\u0000>3}", "it's \"q\"\n", "it's \"q\"\n"},
	{"{observation:\u0000>3}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301xyz\U0001f600"},
	{"{observation:.3}", "ab", "ab"},
	{"{observation:.3}", "\u00e9\U0001f600x", "\u00e9\U0001f600x"},
	{"{observation:.3}", "it's \"q\"\n", "it'"},
	{"{observation:.3}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301"},
	{"{observation:.0}", "ab", ""},
	{"{observation:.0}", "\u00e9\U0001f600x", ""},
	{"{observation:.0}", "it's \"q\"\n", ""},
	{"{observation:.0}", "e\u0301\u0301xyz\U0001f600", ""},
	{"{observation:10.3}", "ab", "ab        "},
	{"{observation:10.3}", "\u00e9\U0001f600x", "\u00e9\U0001f600x       "},
	{"{observation:10.3}", "it's \"q\"\n", "it'       "},
	{"{observation:10.3}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301       "},
	{"{observation:>10.3}", "ab", "        ab"},
	{"{observation:>10.3}", "\u00e9\U0001f600x", "       \u00e9\U0001f600x"},
	{"{observation:>10.3}", "it's \"q\"\n", "       it'"},
	{"{observation:>10.3}", "e\u0301\u0301xyz\U0001f600", "       e\u0301\u0301"},
	{"{observation!r:.4}", "ab", "'ab'"},
	{"{observation!r:.4}", "\u00e9\U0001f600x", "'\u00e9\U0001f600x"},
	{"{observation!r:.4}", "it's \"q\"\n", "'it\\"},
	{"{observation!r:.4}", "e\u0301\u0301xyz\U0001f600", "'e\u0301\u0301"},
	{"{observation!r:.1}", "ab", "'"},
	{"{observation!r:.1}", "\u00e9\U0001f600x", "'"},
	{"{observation!r:.1}", "it's \"q\"\n", "'"},
	{"{observation!r:.1}", "e\u0301\u0301xyz\U0001f600", "'"},
	{"{observation!r:.0}", "ab", ""},
	{"{observation!r:.0}", "\u00e9\U0001f600x", ""},
	{"{observation!r:.0}", "it's \"q\"\n", ""},
	{"{observation!r:.0}", "e\u0301\u0301xyz\U0001f600", ""},
	{"{observation!a:^12.5}", "ab", "    'ab'    "},
	{"{observation!a:^12.5}", "\u00e9\U0001f600x", "   '\\xe9    "},
	{"{observation!a:^12.5}", "it's \"q\"\n", "   'it\\'    "},
	{"{observation!a:^12.5}", "e\u0301\u0301xyz\U0001f600", "   'e\\u0    "},
	{"{observation!a:.6}", "ab", "'ab'"},
	{"{observation!a:.6}", "\u00e9\U0001f600x", "'\\xe9\\"},
	{"{observation!a:.6}", "it's \"q\"\n", "'it\\'s"},
	{"{observation!a:.6}", "e\u0301\u0301xyz\U0001f600", "'e\\u03"},
	{"{observation:\u0663}", "ab", "ab "},
	{"{observation:\u0663}", "\u00e9\U0001f600x", "\u00e9\U0001f600x"},
	{"{observation:\u0663}", "it's \"q\"\n", "it's \"q\"\n"},
	{"{observation:\u0663}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301xyz\U0001f600"},
	{"{observation:>\u0967\u0968}", "ab", "          ab"},
	{"{observation:>\u0967\u0968}", "\u00e9\U0001f600x", "         \u00e9\U0001f600x"},
	{"{observation:>\u0967\u0968}", "it's \"q\"\n", "   it's \"q\"\n"},
	{"{observation:>\u0967\u0968}", "e\u0301\u0301xyz\U0001f600", "     e\u0301\u0301xyz\U0001f600"},
	{"{observation:\U0001d7d9\U0001d7d8}", "ab", "ab        "},
	{"{observation:\U0001d7d9\U0001d7d8}", "\u00e9\U0001f600x", "\u00e9\U0001f600x       "},
	{"{observation:\U0001d7d9\U0001d7d8}", "it's \"q\"\n", "it's \"q\"\n "},
	{"{observation:\U0001d7d9\U0001d7d8}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301xyz\U0001f600   "},
	{"{observation:.\u0663}", "ab", "ab"},
	{"{observation:.\u0663}", "\u00e9\U0001f600x", "\u00e9\U0001f600x"},
	{"{observation:.\u0663}", "it's \"q\"\n", "it'"},
	{"{observation:.\u0663}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301"},
	{"{observation:s}", "ab", "ab"},
	{"{observation:s}", "\u00e9\U0001f600x", "\u00e9\U0001f600x"},
	{"{observation:s}", "it's \"q\"\n", "it's \"q\"\n"},
	{"{observation:s}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301xyz\U0001f600"},
	{"{observation:>8s}", "ab", "      ab"},
	{"{observation:>8s}", "\u00e9\U0001f600x", "     \u00e9\U0001f600x"},
	{"{observation:>8s}", "it's \"q\"\n", "it's \"q\"\n"},
	{"{observation:>8s}", "e\u0301\u0301xyz\U0001f600", " e\u0301\u0301xyz\U0001f600"},
	{"{observation:}", "ab", "ab"},
	{"{observation:}", "\u00e9\U0001f600x", "\u00e9\U0001f600x"},
	{"{observation:}", "it's \"q\"\n", "it's \"q\"\n"},
	{"{observation:}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301xyz\U0001f600"},
	{"{observation!r:}", "ab", "'ab'"},
	{"{observation!r:}", "\u00e9\U0001f600x", "'\u00e9\U0001f600x'"},
	{"{observation!r:}", "it's \"q\"\n", "'it\\'s \"q\"\\n'"},
	{"{observation!r:}", "e\u0301\u0301xyz\U0001f600", "'e\u0301\u0301xyz\U0001f600'"},
	{"{observation:<}", "ab", "ab"},
	{"{observation:<}", "\u00e9\U0001f600x", "\u00e9\U0001f600x"},
	{"{observation:<}", "it's \"q\"\n", "it's \"q\"\n"},
	{"{observation:<}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301xyz\U0001f600"},
	{"{observation:.9223372036854775807}", "ab", "ab"},
	{"{observation:.9223372036854775807}", "\u00e9\U0001f600x", "\u00e9\U0001f600x"},
	{"{observation:.9223372036854775807}", "it's \"q\"\n", "it's \"q\"\n"},
	{"{observation:.9223372036854775807}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301xyz\U0001f600"},
	{"{observation}|{observation!r}|{observation:>4.1}", "ab", "ab|'ab'|   a"},
	{"{observation}|{observation!r}|{observation:>4.1}", "\u00e9\U0001f600x", "\u00e9\U0001f600x|'\u00e9\U0001f600x'|   \u00e9"},
	{"{observation}|{observation!r}|{observation:>4.1}", "it's \"q\"\n", "it's \"q\"\n|'it\\'s \"q\"\\n'|   i"},
	{"{observation}|{observation!r}|{observation:>4.1}", "e\u0301\u0301xyz\U0001f600", "e\u0301\u0301xyz\U0001f600|'e\u0301\u0301xyz\U0001f600'|   e"},
	{"[{observation!a:~<6}]", "ab", "['ab'~~]"},
	{"[{observation!a:~<6}]", "\u00e9\U0001f600x", "['\\xe9\\U0001f600x']"},
	{"[{observation!a:~<6}]", "it's \"q\"\n", "['it\\'s \"q\"\\n']"},
	{"[{observation!a:~<6}]", "e\u0301\u0301xyz\U0001f600", "['e\\u0301\\u0301xyz\\U0001f600']"},
}

func TestTemplateRenderMatchesCPython(t *testing.T) {
	for _, c := range renderCases {
		tp, err := ParseTemplate(c.tmpl)
		if err != nil {
			t.Errorf("ParseTemplate(%q): %v", c.tmpl, err)
			continue
		}
		if got := tp.Render(c.obs); got != c.want {
			t.Errorf("%q.format(observation=%q):\n   go: %q\n  cpy: %q", c.tmpl, c.obs, got, c.want)
		}
		if got := string(tp.AppendRender([]byte("<>"), c.obs)); got != "<>"+c.want {
			t.Errorf("AppendRender(%q, %q) = %q", c.tmpl, c.obs, got)
		}
		nb, nc := tp.renderSize(c.obs, -1)
		if nb != len(c.want) || nc != int64(utf8.RuneCountInString(c.want)) {
			t.Errorf("renderSize(%q, %q) = %d, %d; want %d, %d", c.tmpl, c.obs, nb, nc, len(c.want), utf8.RuneCountInString(c.want))
		}
		if err := ValidateTemplate(c.tmpl); err != nil {
			t.Errorf("ValidateTemplate(%q) = %v", c.tmpl, err)
		}
	}
}

// Rejections. gap "" means CPython 3.12.1 raises for this template (checked
// with observation "abc", and the message shown in the comment); otherwise
// CPython accepts it for some observation and the rejection is the named GAP
// class. The offsets are the code point the message should point at.
var errorCases = []struct {
	tmpl   string
	offset int
	gap    string
}{
	{"}", 0, ""},                                        // Single '}' encountered
	{"a}", 1, ""},                                       // Single '}' encountered
	{"{", 0, ""},                                        // Single '{' encountered
	{"ab{", 2, ""},                                      // Single '{' encountered
	{"{observation}}", 13, ""},                          // Single '}' encountered
	{"ok {observation} }", 17, ""},                      // Single '}' encountered
	{"}{observation.x}", 0, ""},                         // the first problem wins
	{"{observation", 0, ""},                             // expected '}' before end of string
	{"{observation[0}", 0, ""},                          // expected '}' before end of string
	{"{obs{", 4, ""},                                    // unexpected '{' in field name
	{"{}", 0, ""},                                       // IndexError: Replacement index 0
	{"{0}", 1, ""},                                      // IndexError
	{"{\u0663}", 1, ""},                                 // IndexError: Replacement index 3
	{"{obs}", 1, ""},                                    // KeyError: 'obs'
	{"{Observation}", 1, ""},                            // KeyError
	{"{ observation}", 1, ""},                           // KeyError: ' observation'
	{"{observation!}", 12, ""},                          // unmatched '{' in format spec
	{"{observation!r", 0, ""},                           // unmatched '{' in format spec
	{"{observation:", 0, ""},                            // unmatched '{' in format spec
	{"{observation:{", 0, ""},                           // unmatched '{' in format spec
	{"{observation!}}", 12, ""},                         // Unknown conversion specifier }
	{"{observation!x}", 13, ""},                         // Unknown conversion specifier x
	{"{observation!R}", 13, ""},                         // Unknown conversion specifier R
	{"{observation!", 12, ""},                           // end of string while looking for conversion specifier
	{"{observation!r!s}", 14, ""},                       // expected ':' after conversion specifier
	{"{observation!rs}", 14, ""},                        // expected ':' after conversion specifier
	{"{observation:=5}", 13, ""},                        // '=' alignment not allowed
	{"{observation:0=5}", 14, ""},                       // '=' alignment not allowed
	{"{observation:+}", 13, ""},                         // Sign not allowed
	{"{observation: }", 13, ""},                         // Space not allowed
	{"{observation:-5}", 13, ""},                        // Sign not allowed
	{"{observation:z}", 13, ""},                         // Negative zero coercion (z) not allowed
	{"{observation:#}", 13, ""},                         // Alternate form (#) not allowed
	{"{observation:,}", 13, ""},                         // Cannot specify ',' with 's'.
	{"{observation:_}", 13, ""},                         // Cannot specify '_' with 's'.
	{"{observation:,_}", 14, ""},                        // Cannot specify both ',' and '_'.
	{"{observation:_,}", 14, ""},                        // Cannot specify both ',' and '_'.
	{"{observation:.}", 13, ""},                         // Format specifier missing precision
	{"{observation:.,}", 13, ""},                        // Format specifier missing precision
	{"{observation:d}", 13, ""},                         // Unknown format code 'd'
	{"{observation:\x00}", 13, ""},                      // Unknown format code '\x0'
	{"{observation:ss}", 13, ""},                        // Invalid format specifier 'ss'
	{"{observation:5.2xs}", 16, ""},                     // Invalid format specifier '5.2xs'
	{"{observation:99999999999999999999}", 13, ""},      // Too many decimal digits
	{"{observation:>9223372036854775808}", 14, ""},      // Too many decimal digits
	{"{observation:.99999999999999999999}", 14, ""},     // Too many decimal digits
	{"{observation.upper}", 12, "attribute"},            // CPython: '<built-in method upper of str object at 0x...>'
	{"{observation.__doc__}", 12, "attribute"},          // CPython: the str docstring
	{"{observation[0]}", 12, "index"},                   // CPython: 'a' (IndexError for '')
	{"{observation[-1]}", 12, "index"},                  // CPython raises TypeError; GAP message still
	{"{observation[0]x}", 12, "index"},                  // CPython raises "Only '.' or '[' may follow ']'"
	{"{observation:{w}}", 13, "nested"},                 // CPython raises KeyError 'w'; GAP message still
	{"{observation:>{observation}}", 14, "nested"},      // CPython: '    5' for observation '5'
	{"{observation:{observation}}", 13, "nested"},       // CPython: accepted for observation '5'
	{"{observation:1048577}", 13, "width"},              // CPython: 1048577 code points
	{"{observation:>01048577}", 15, "width"},            // CPython: '0' * 1048574 + 'abc'
	{"x{observation:9223372036854775807}", 14, "width"}, // CPython: MemoryError (allocates the width)
	{"{observation:.1}{observation:^\u0661\u0660\u0660\u0660\u0660\u0660\u0660\u0660}", 30, "width"}, // width 10,000,000 in Arabic-Indic digits
	{"", 0, "nofield"},                 // CPython: ''
	{"Output:", 0, "nofield"},          // CPython: 'Output:'
	{"{{observation}}", 0, "nofield"},  // CPython: '{observation}'
	{"x{{observation}}", 1, "nofield"}, // CPython: 'x{observation}'
	{"a}}b", 0, "nofield"},             // CPython: 'a}b'
}

func TestTemplateErrors(t *testing.T) {
	for _, c := range errorCases {
		tp, err, gap := parseTemplate(c.tmpl)
		if err == nil {
			t.Errorf("%q accepted (renders %q), want a rejection", c.tmpl, tp.Render("abc"))
			continue
		}
		if err.Code != CodeInvalidTemplate || err.Path != "" {
			t.Errorf("%q: code %q path %q, want %q and an empty path", c.tmpl, err.Code, err.Path, CodeInvalidTemplate)
		}
		if err.Offset != c.offset {
			t.Errorf("%q: offset %d, want %d (%s)", c.tmpl, err.Offset, c.offset, err.Message)
		}
		if !strings.Contains(err.Message, "offset "+itoa(c.offset)) {
			t.Errorf("%q: message %q does not name offset %d", c.tmpl, err.Message, c.offset)
		}
		if gap.String() != c.gap {
			t.Errorf("%q: GAP class %q, want %q (%s)", c.tmpl, gap, c.gap, err.Message)
		}
		isGap := c.gap != "" && c.gap != "nofield"
		if strings.HasPrefix(err.Message, gapPrefix) != isGap {
			t.Errorf("%q: message %q; the GAP prefix belongs exactly to the GAP classes", c.tmpl, err.Message)
		}
		if _, perr := ParseTemplate(c.tmpl); perr == nil || *perr != *err {
			t.Errorf("%q: ParseTemplate gives %v, parseTemplate %v", c.tmpl, perr, err)
		}
		verr := ValidateTemplate(c.tmpl)
		want := *err
		want.Path = "observation_template"
		if e, ok := verr.(*Error); !ok || *e != want {
			t.Errorf("%q: ValidateTemplate gives %v, want %v", c.tmpl, verr, want)
		}
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

func TestValidateTemplateNil(t *testing.T) {
	// A typed nil *Error inside the interface would make err != nil true.
	if err := ValidateTemplate("{observation}"); err != nil {
		t.Fatalf("ValidateTemplate(valid) = %#v, want nil", err)
	}
}

func TestTemplateInvalidUTF8(t *testing.T) {
	for _, c := range []struct {
		tmpl   string
		offset int
	}{{"\xff{observation}", 0}, {"é{observation}\xc3", 14}, {"{observation:\xed\xa0\x80}", 13}} {
		_, err := ParseTemplate(c.tmpl)
		if err == nil || err.Code != CodeInvalidUTF8 || err.Offset != c.offset {
			t.Errorf("%q: %v, want %s at offset %d", c.tmpl, err, CodeInvalidUTF8, c.offset)
		}
	}
}

// The largest accepted width. CPython 3.12.1:
// len("{observation:1048576}".format(observation="ab")) == 1048576 and
// "{observation:😀>1048576}".format(observation="ab") is 1048574 fills and "ab".
func TestTemplateMaxWidth(t *testing.T) {
	tp, err := ParseTemplate("{observation:\U0001F600>1048576}")
	if err != nil {
		t.Fatal(err)
	}
	out := tp.Render("ab")
	want := strings.Repeat("\U0001F600", 1048574) + "ab"
	if out != want {
		t.Fatalf("render: %d bytes, want %d", len(out), len(want))
	}
	if nb, nc := tp.renderSize("ab", -1); nb != len(want) || nc != 1048576 {
		t.Fatalf("renderSize = %d, %d", nb, nc)
	}
}

// An observation that is not valid UTF-8 breaks the contract; the engine
// must still not panic and renderSize must give the bytes AppendRender
// writes (its code-point count is defined for valid UTF-8 only).
func TestTemplateInvalidObservation(t *testing.T) {
	for _, tmpl := range []string{"{observation}", "{observation!r}", "{observation!a:^9.4}", "{observation:*>8.3}", "{observation!r:.5}"} {
		tp, err := ParseTemplate(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		for _, obs := range []string{"\xff", "a\xc3", "\xed\xa0\x80'\"", "\xf4\x90\x80\x80x"} {
			out := tp.AppendRender(nil, obs)
			nb, nc := tp.renderSize(obs, -1)
			if nb != len(out) || nc < 0 {
				t.Errorf("%q %q: renderSize %d,%d but wrote %q", tmpl, obs, nb, nc, out)
			}
		}
	}
}

// Rendering must not allocate beyond the growth of dst.
func TestTemplateRenderAllocs(t *testing.T) {
	obs := strings.Repeat("line 'one'\n\t\"two\" é😀\x00 ", 20)
	buf := make([]byte, 0, 1<<16)
	for _, tmpl := range []string{
		"{observation}",
		"Output:\n```\n{observation}\n```\n\n",
		"{observation!r}",
		"{observation!a:^900.300}|{observation:😀<1000}|{observation!r:.7}",
	} {
		tp, err := ParseTemplate(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { buf = tp.AppendRender(buf[:0], obs) }); n != 0 {
			t.Errorf("%q: AppendRender allocates %v times per call", tmpl, n)
		}
		if n := testing.AllocsPerRun(100, func() { tp.renderSize(obs, -1) }); n != 0 {
			t.Errorf("%q: renderSize allocates %v times per call", tmpl, n)
		}
	}
}
