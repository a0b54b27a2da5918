package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
)

// quote is s as a string literal that Python and JavaScript both read as s
// (JSON's escapes are a subset of both languages').
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err) // a string always encodes
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// codes are the error codes as quoted literals, in order.
func codes() []string {
	var out []string
	for _, c := range core.Codes() {
		out = append(out, quote(string(c)))
	}
	return out
}

// mustParse is parse of a format files already checked.
func mustParse(f format) ([]string, []byte) {
	p, v, err := parse(f)
	if err != nil {
		panic(err)
	}
	return p, v
}

const pyDoc = `"""The host contract: the module's calls, error codes, limits, pool defaults, messages, cache layout.

Generated from their one definition in Go (core/abi, and core/errors.go for
the error codes); regenerate with ` + "``go generate ./...``" + ` from the repository
root. A ` + "``*_FORMAT``" + ` is a Go format whose only verbs are ` + "``%d``" + ` and ` + "``%s``" + `:
Python's ` + "``%``" + ` operator gives the same text as Go's fmt.Sprintf, and the
function of the same name in lower case applies it.
"""
`

// python is _consts.py.
func python() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n%s\nfrom __future__ import annotations\n\nfrom typing import Final, Literal, NamedTuple, get_args\n\n", header, pyDoc)
	b.WriteString("__all__ = [\n")
	for _, name := range pythonNames() {
		fmt.Fprintf(&b, "    %q,\n", name)
	}
	b.WriteString("]\n\n#: Error codes of the wire format (" + spec("§6") + ").\nErrorCode = Literal[\n")
	for _, c := range codes() {
		fmt.Fprintf(&b, "    %s,\n", c)
	}
	b.WriteString("]\n\n#: Every error code, in the order of " + spec("§6") + ".\nERROR_CODES: Final[tuple[ErrorCode, ...]] = get_args(ErrorCode)\n")
	pythonCalls(&b)
	for _, c := range ints {
		fmt.Fprintf(&b, "\n#: %s\n%s: Final = %d\n", c.doc, c.name, c.value)
	}
	for _, c := range strs {
		fmt.Fprintf(&b, "\n#: %s\n%s\n", c.doc, pythonStr(c.name, c.value))
	}
	for _, l := range lists {
		items := strings.Join(quoted(l.values), ", ")
		if len(l.values) == 1 {
			items += ","
		}
		line := fmt.Sprintf("%s: Final[tuple[str, ...]] = (%s)", l.name, items)
		if len(line) > pyLineMax { // as ruff format writes a tuple too long for its line
			line = fmt.Sprintf("%s: Final[tuple[str, ...]] = (\n    %s,\n)", l.name, strings.Join(quoted(l.values), ",\n    "))
		}
		fmt.Fprintf(&b, "\n#: %s\n%s\n", l.doc, line)
	}
	for _, f := range formats {
		pythonFormat(&b, f)
	}
	return []byte(strings.TrimRight(b.String(), "\n") + "\n")
}

// pythonNames is __all__ of _consts.py, sorted as ruff's RUF022 wants it:
// UPPER_CASE names, then CamelCase, then the rest, each in byte order.
func pythonNames() []string {
	names := []string{"ERROR_CODES", "ErrorCode", "CALLS", "CallSpec", "CallArg", "CallAnswer", "HostError"}
	for _, c := range ints {
		names = append(names, c.name)
	}
	for _, c := range strs {
		names = append(names, c.name)
	}
	for _, l := range lists {
		names = append(names, l.name)
	}
	for _, f := range formats {
		names = append(names, f.name, f.py)
	}
	class := func(s string) int {
		switch {
		case strings.ToUpper(s) == s:
			return 0
		case s[0] >= 'A' && s[0] <= 'Z':
			return 1
		}
		return 2
	}
	sort.Slice(names, func(i, j int) bool {
		if ci, cj := class(names[i]), class(names[j]); ci != cj {
			return ci < cj
		}
		return names[i] < names[j]
	})
	return names
}

// pythonStr is the assignment of a str constant as ruff format (line
// length 130) writes it: the literal in parentheses on a line of its own
// when that makes a line over 130 columns fit.
func pythonStr(name, value string) string {
	line, lit := name+": Final = "+quote(value), "    "+quote(value)
	if utf8.RuneCountInString(line) <= 130 || utf8.RuneCountInString(lit) > 130 {
		return line
	}
	return name + ": Final = (\n" + lit + "\n)"
}

func pythonFormat(b *strings.Builder, f format) {
	_, verbs := mustParse(f)
	params := make([]string, len(f.args))
	for i, a := range f.args {
		params[i] = a + ": " + map[byte]string{'d': "int", 's': "str"}[verbs[i]]
	}
	fmt.Fprintf(b, "\n#: %s\n%s\n", f.doc, pythonStr(f.name, f.value))
	fmt.Fprintf(b, "\n\ndef %s(%s) -> str:\n    \"\"\"%s applied to its arguments.\"\"\"\n", f.py, strings.Join(params, ", "), f.name)
	tuple := strings.Join(f.args, ", ")
	if len(f.args) == 1 {
		tuple += ","
	}
	fmt.Fprintf(b, "    return %s %% (%s)\n\n", f.name, tuple)
}

// internalMessages is the JavaScript API's INTERNAL_MESSAGES: its keys and
// the constants they hold.
var internalMessages = [][2]string{{"outOfMemory", "MSG_OUT_OF_MEMORY"}, {"trapped", "MSG_TRAPPED"}, {"notAResponse", "MSG_BAD_RESPONSE"}}

const jsDoc = `/**
 * The host contract: the module's calls, the error codes, limits, pool
 * defaults, message texts and the cache's layout, generated from their one
 * definition in Go (core/abi, and core/errors.go for the error codes);
 * regenerate with ` + "`go generate ./...`" + ` from the repository root. A
 * ` + "`*_FORMAT`" + ` is a Go format (verbs %d and %s); the function of the same
 * name in camelCase gives its text.
 *
 * @module
 */
`

// javascript is consts.js.
func javascript() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n%s\n", header, jsDoc)
	fmt.Fprintf(&b, "/** Every error code, in the order of %s. */\nexport const ERROR_CODES = Object.freeze([\n  %s,\n]);\n", spec("§6"), strings.Join(codes(), ",\n  "))
	jsCalls(&b)
	for _, c := range ints {
		fmt.Fprintf(&b, "\n/** %s */\nexport const %s = %d;\n", c.doc, c.name, c.value)
	}
	for _, c := range strs {
		fmt.Fprintf(&b, "\n/** %s */\nexport const %s = %s;\n", c.doc, c.name, quote(c.value))
	}
	for _, l := range lists {
		fmt.Fprintf(&b, "\n/** %s */\nexport const %s = Object.freeze([%s]);\n", l.doc, l.name, strings.Join(quoted(l.values), ", "))
	}
	b.WriteString("\n/** The messages of `internal` errors: the same on every host. */\nexport const INTERNAL_MESSAGES = Object.freeze({\n")
	for _, kv := range internalMessages {
		fmt.Fprintf(&b, "  %s: %s,\n", kv[0], kv[1])
	}
	b.WriteString("});\n")
	for _, f := range formats {
		jsFormat(&b, f)
	}
	jsInvisible(&b)
	return []byte(b.String())
}

// typescript is consts.d.ts.
func typescript() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n\n", header)
	fmt.Fprintf(&b, "/** Every error code of the wire format (%s). */\nexport type ErrorCode =\n  | %s;\n", spec("§6"), strings.Join(codes(), "\n  | "))
	b.WriteString("\n/** Every error code, in the order of " + spec("§6") + ". */\nexport const ERROR_CODES: readonly ErrorCode[];\n")
	tsCalls(&b)
	for _, c := range ints {
		fmt.Fprintf(&b, "\n/** %s */\nexport const %s: number;\n", c.doc, c.name)
	}
	for _, c := range strs {
		fmt.Fprintf(&b, "\n/** %s */\nexport const %s: %s;\n", c.doc, c.name, quote(c.value))
	}
	for _, l := range lists {
		fmt.Fprintf(&b, "\n/** %s */\nexport const %s: readonly string[];\n", l.doc, l.name)
	}
	b.WriteString("\n/** The messages of `internal` errors: the same on every host. */\nexport const INTERNAL_MESSAGES: {\n")
	for _, kv := range internalMessages {
		fmt.Fprintf(&b, "  readonly %s: typeof %s;\n", kv[0], kv[1])
	}
	b.WriteString("};\n")
	for _, f := range formats {
		names, types, _ := jsParams(f)
		for i := range names {
			names[i] += ": " + types[i]
		}
		fmt.Fprintf(&b, "\n/** %s */\nexport const %s: string;\n", f.doc, f.name)
		fmt.Fprintf(&b, "\n/** {@link %s} applied to its arguments. */\nexport function %s(%s): string;\n", f.name, f.js, strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, "\n/** %s */\nexport const INVISIBLE_RANGES: readonly (readonly [number, number])[];\n", invisibleDoc)
	return []byte(b.String())
}

// jsParams returns the JavaScript names and types of f's arguments, and
// the function's expression: the quoted literal pieces and the arguments,
// concatenated.
func jsParams(f format) (names, types []string, expr string) {
	pieces, verbs := mustParse(f)
	var terms []string
	for i, p := range pieces {
		if i > 0 {
			names = append(names, camel(f.args[i-1]))
			types = append(types, map[byte]string{'d': "number | bigint", 's': "string"}[verbs[i-1]])
			terms = append(terms, "String("+names[i-1]+")")
		}
		if p != "" {
			terms = append(terms, quote(p))
		}
	}
	return names, types, strings.Join(terms, " + ")
}

// jsFormat writes f's constant and function to consts.js.
func jsFormat(b *strings.Builder, f format) {
	names, types, expr := jsParams(f)
	tags := make([]string, len(names))
	for i := range names {
		tags[i] = "@param {" + types[i] + "} " + names[i]
	}
	fmt.Fprintf(b, "\n/** %s */\nexport const %s = %s;\n", f.doc, f.name, quote(f.value))
	fmt.Fprintf(b, "\n/**\n * {@link %s} applied to its arguments.\n *\n * %s\n * @returns {string}\n */\n", f.name, strings.Join(tags, "\n * "))
	fmt.Fprintf(b, "export function %s(%s) {\n  return %s;\n}\n", f.js, strings.Join(names, ", "), expr)
}

// invisibleDoc documents INVISIBLE_RANGES (JavaScript only: the preview).
const invisibleDoc = "The code points a view of a prompt marks (abi.InvisibleRanges; the project's docs/SPEC.md §7.8, in the source repository): [first, last] inclusive, ascending; the CLI's --out text marks the same."

// jsInvisible writes INVISIBLE_RANGES, abi.InvisibleRanges, for the
// JavaScript preview.
func jsInvisible(b *strings.Builder) {
	fmt.Fprintf(b, "\n/** %s */\nexport const INVISIBLE_RANGES = Object.freeze([\n", invisibleDoc)
	for _, r := range invisibleRanges() {
		fmt.Fprintf(b, "  Object.freeze([0x%04x, 0x%04x]),\n", r[0], r[1])
	}
	b.WriteString("]);\n")
}

// callsDoc documents CALLS, the contract's table abi.Calls.
const callsDoc = "Every call of the module's call export, in op order (CALLS[op]): its name, op number, request and answer shapes, parameters and what it does (wasm/README.md, in the source repository)."

// hostErrorsDoc documents HostError, the error argument of the error call.
const hostErrorsDoc = "The errors a host asks the error call (CALLS row \"error\") to answer: the error argument."

// hostErrors are abi.HostErrors, quoted.
func hostErrors() (q []string) {
	for _, e := range abi.HostErrors {
		q = append(q, quote(e))
	}
	return q
}

// shapes are the names of the request (abi.Arg) and answer (abi.Answer)
// shapes, quoted.
func shapes() (args, answers []string) {
	for a := range abi.NumArgs {
		args = append(args, quote(a.String()))
	}
	for a := range abi.NumAnswers {
		answers = append(answers, quote(a.String()))
	}
	return args, answers
}

// callFields is c as a row of CALLS: each field's name and value (a
// literal of both languages).
func callFields(c abi.Spec, python bool) [][2]string {
	var params []string
	for _, p := range c.Params {
		params = append(params, quote(p))
	}
	list := "Object.freeze([" + strings.Join(params, ", ") + "])"
	if python {
		list = "(" + strings.Join(params, ", ") + ")"
		if len(params) == 1 {
			list = "(" + params[0] + ",)"
		}
	}
	return [][2]string{
		{"name", quote(c.Name)}, {"op", fmt.Sprint(c.Op)}, {"arg", quote(c.Arg.String())},
		{"answer", quote(c.Answer.String())}, {"params", list}, {"doc", quote(c.Doc)},
	}
}

// pythonCalls writes CallArg, CallAnswer, CallSpec and CALLS to _consts.py,
// each row exploded with a trailing comma, as ruff format keeps it.
func pythonCalls(b *strings.Builder) {
	args, answers := shapes()
	fmt.Fprintf(b, "\n#: The shapes of a call's request.\nCallArg = Literal[%s]\n", strings.Join(args, ", "))
	fmt.Fprintf(b, "\n#: The shapes of a call's answer (an error is answered in its call's shape).\nCallAnswer = Literal[%s]\n", strings.Join(answers, ", "))
	fmt.Fprintf(b, "\n#: %s\nHostError = Literal[%s]\n", hostErrorsDoc, strings.Join(hostErrors(), ", "))
	b.WriteString("\n\nclass CallSpec(NamedTuple):\n    \"\"\"One call of the module: a row of CALLS.\"\"\"\n\n" +
		"    name: str\n    op: int\n    arg: CallArg\n    answer: CallAnswer\n    params: tuple[str, ...]\n    doc: str\n\n")
	fmt.Fprintf(b, "\n#: %s\nCALLS: Final[tuple[CallSpec, ...]] = (\n", callsDoc)
	for _, c := range abi.Calls {
		b.WriteString("    CallSpec(\n")
		for _, f := range callFields(c, true) {
			fmt.Fprintf(b, "        %s=%s,\n", f[0], f[1])
		}
		b.WriteString("    ),\n")
	}
	b.WriteString(")\n")
}

// jsCalls writes CALLS to consts.js.
func jsCalls(b *strings.Builder) {
	fmt.Fprintf(b, "\n/** %s */\nexport const CALLS = Object.freeze([\n", callsDoc)
	for _, c := range abi.Calls {
		b.WriteString("  Object.freeze({\n")
		for _, f := range callFields(c, false) {
			fmt.Fprintf(b, "    %s: %s,\n", f[0], f[1])
		}
		b.WriteString("  }),\n")
	}
	b.WriteString("]);\n")
}

// tsCalls writes CallSpec and CALLS to consts.d.ts.
func tsCalls(b *strings.Builder) {
	args, answers := shapes()
	fmt.Fprintf(b, "\n/** One call of the module: a row of CALLS. */\nexport interface CallSpec {\n"+
		"  readonly name: string;\n  readonly op: number;\n  readonly arg: %s;\n  readonly answer: %s;\n  readonly params: readonly string[];\n  readonly doc: string;\n}\n",
		strings.Join(args, " | "), strings.Join(answers, " | "))
	fmt.Fprintf(b, "\n/** %s */\nexport const CALLS: readonly CallSpec[];\n", callsDoc)
	fmt.Fprintf(b, "\n/** %s */\nexport type HostError = %s;\n", hostErrorsDoc, strings.Join(hostErrors(), " | "))
}
