package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

const typesPyDoc = `"""Typed shapes of the wire format v1 as TypedDicts (the README's "Types"; the
requests of the project's docs/SPEC.md §2, in the source repository, and the
responses of its §6).

Generated from the Go types of the core (core/core.go, core/compare.go,
core/errors.go, core/cache_report.go, core/cache_types.go, core/export.go) by
tools/genconsts; regenerate with ` + "``go generate ./...``" + `.
They describe well-formed values for type checkers only: at run time any
mapping is accepted and the WebAssembly core alone decides what is valid.
"""
`

const typesTsDoc = `/**
 * Typed shapes of the wire format v1 (requests: the project's docs/SPEC.md §2, in the source repository; responses: its §6),
 * generated from the Go types of the core (core/core.go, core/compare.go, core/errors.go, core/cache_report.go,
 * core/cache_types.go, core/export.go) by tools/genconsts.
 * They describe well-formed values for type checkers only: at run time any value is accepted and the
 * WebAssembly core alone decides what is valid.
 */
`

// pyWords and tsWords spell the docs' null, true and false and core's
// function names in each language.
var (
	pyWords = strings.NewReplacer("null", "None", "true", "True", "false", "False")
	docWord = regexp.MustCompile(`\b(null|true|false|[A-Z][a-z]+[A-Z][A-Za-z]*)\b`)
)

// langDoc is doc in Python's words (python) or TypeScript's.
func langDoc(doc string, python bool) string {
	return docWord.ReplaceAllStringFunc(doc, func(w string) string {
		if n, ok := goNames[w]; ok {
			if python {
				return "``" + n[0] + "``"
			}
			return "`" + n[1] + "`"
		}
		if python {
			return pyWords.Replace(w)
		}
		return w
	})
}

// pyText is doc in Python's words, as reStructuredText: `x` is a literal,
// “x“.
func pyText(doc string) string {
	return langDoc(strings.ReplaceAll(doc, "`", "``"), true)
}

// quoted is each of values as a literal.
func quoted(values []string) []string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = quote(v)
	}
	return q
}

// pyType is t in Python.
func pyType(t *texpr, shapes []shape) string {
	if t.py != "" {
		return t.py
	}
	switch t.kind {
	case "str", "int", "float", "bool":
		return t.kind
	case "any":
		return "Any"
	case "list":
		return "List[" + pyType(t.elem, shapes) + "]"
	case "dict":
		return "Dict[str, " + pyType(t.elem, shapes) + "]"
	case "null":
		return "Optional[" + pyType(t.elem, shapes) + "]"
	case "named":
		return t.name
	case "lit":
		if t.alias != "" {
			return t.alias
		}
		return "Literal[" + strings.Join(quoted(t.lits), ", ") + "]"
	case "union":
		if t.alias != "" {
			return t.alias
		}
		var es []string
		for _, e := range t.elems {
			es = append(es, pyType(e, shapes))
		}
		return "Union[" + strings.Join(es, ", ") + "]"
	}
	panic("no Python type " + t.kind)
}

// tsType is t in TypeScript.
func tsType(t *texpr, shapes []shape) string {
	if t.ts != "" {
		return t.ts
	}
	switch t.kind {
	case "str":
		return "string"
	case "int", "float":
		return "number"
	case "any":
		return "unknown"
	case "bool":
		return "boolean"
	case "list":
		e := tsType(t.elem, shapes)
		if strings.Contains(e, " ") {
			e = "(" + e + ")"
		}
		return e + "[]"
	case "dict":
		return "Record<string, " + tsType(t.elem, shapes) + ">"
	case "null":
		return tsType(t.elem, shapes) + " | null"
	case "named":
		for _, s := range shapes {
			if s.py == t.name {
				return s.ts
			}
		}
		panic("no type " + t.name)
	case "lit":
		if t.alias != "" {
			return t.alias
		}
		return strings.Join(quoted(t.lits), " | ")
	case "union":
		if t.alias != "" {
			return t.alias
		}
		var es []string
		for _, e := range t.elems {
			es = append(es, tsType(e, shapes))
		}
		return strings.Join(es, " | ")
	}
	panic("no TypeScript type " + t.kind)
}

// pyLineMax is the line length of ruff format in bindings/python/pyproject.toml.
const pyLineMax = 130

// pyAssign is "name = expr" as ruff format writes it: on one line when it
// fits, else the subscript's items on one indented line, else one a line
// with a trailing comma; so make check's ruff format leaves the generated
// file as go generate wrote it, however many items a Literal gains.
func pyAssign(name, expr string) string {
	line := name + " = " + expr
	open := strings.IndexByte(expr, '[')
	if len(line) <= pyLineMax || open < 0 || !strings.HasSuffix(expr, "]") {
		return line
	}
	head, inner := expr[:open+1], expr[open+1:len(expr)-1]
	if len("    "+inner) <= pyLineMax || strings.ContainsAny(inner, "[]") {
		return name + " = " + head + "\n    " + inner + "\n]"
	}
	items := strings.Split(inner, ", ")
	return name + " = " + head + "\n    " + strings.Join(items, ",\n    ") + ",\n]"
}

// pythonTypes is _types.py.
func pythonTypes(shapes []shape) []byte {
	var b strings.Builder
	pyHeader(&b, shapes)
	for _, a := range aliases {
		if a.t.kind == "lit" {
			fmt.Fprintf(&b, "\n#: %s\n%s\n", pyText(a.doc), pyAssign(a.t.alias, pyType(aliased("", a.t), shapes)))
		}
	}
	for _, s := range shapes {
		if s.py == "" {
			continue
		}
		var required, optional []field
		for _, f := range s.fields {
			if f.optional {
				optional = append(optional, f)
			} else {
				required = append(required, f)
			}
		}
		pyShape(&b, s, required, optional, shapes)
	}
	// the unions, after the classes they name (an alias is evaluated)
	sep := "\n\n"
	for _, a := range aliases {
		if a.t.kind != "lit" {
			fmt.Fprintf(&b, "%s#: %s\n%s\n", sep, pyText(a.doc), pyAssign(a.t.alias, pyType(aliased("", a.t), shapes)))
			sep = "\n"
		}
	}
	return []byte(b.String())
}

// pyHeader writes _types.py's docs, imports and __all__.
func pyHeader(b *strings.Builder, shapes []shape) {
	fmt.Fprintf(b, "# %s\n%s\nfrom __future__ import annotations\n\n", header, typesPyDoc)
	b.WriteString("from typing import Any, Dict, List, Literal, Optional, TypedDict, Union, final\n\nfrom ._consts import ErrorCode\n\n__all__ = [\n")
	names := []string{"ErrorCode"}
	for _, a := range aliases {
		names = append(names, a.t.alias)
	}
	for _, s := range shapes {
		if s.py != "" {
			names = append(names, s.py)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(b, "    %q,\n", n)
	}
	b.WriteString("]\n")
}

// pyKeywords are the keys no class body can declare: a TypedDict's
// required ones that are keywords are its base's, in the functional syntax.
var pyKeywords = map[string]bool{"break": true, "class": true, "from": true, "import": true, "in": true, "is": true, "not": true}

// pyShape writes the TypedDict of s: its required keys that are keywords
// in a base of the functional syntax (_NameKeys), its other required keys
// in a base of their own (_NameRequired) where some are optional (Python
// 3.9 has no NotRequired), its optional keys in the class (total=False).
func pyShape(b *strings.Builder, s shape, required, optional []field, shapes []shape) {
	base := "TypedDict"
	var keywords, plain []field
	for _, f := range required {
		if pyKeywords[f.wire] {
			keywords = append(keywords, f)
		} else {
			plain = append(plain, f)
		}
	}
	for _, f := range optional {
		if pyKeywords[f.wire] {
			panic("genconsts: " + s.py + "." + f.wire + ": an optional key that is a Python keyword")
		}
	}
	if len(keywords) > 0 {
		base = "_" + s.py + "Keys"
		fmt.Fprintf(b, "\n\n%s = TypedDict(\n    %q,\n    {\n", base, base)
		for _, f := range keywords {
			if f.doc != "" {
				fmt.Fprintf(b, "        #: %s\n", pyText(f.doc))
			}
			fmt.Fprintf(b, "        %q: %q,\n", f.wire, pyType(f.typ, shapes))
		}
		b.WriteString("    },\n)\n")
	}
	if len(optional) > 0 && len(plain) > 0 {
		req := "_" + s.py + "Required"
		fmt.Fprintf(b, "\n\nclass %s(%s):\n", req, base)
		pyFields(b, plain, shapes)
		base, plain = req, nil
	}
	head, fields := base, plain
	if len(optional) > 0 {
		head, fields = base+", total=False", optional
	}
	final := ""
	if s.final {
		final = "@final\n"
	}
	fmt.Fprintf(b, "\n\n%sclass %s(%s):\n    \"\"\"%s\"\"\"\n", final, s.py, head, pyText(s.doc))
	if len(fields) > 0 {
		b.WriteString("\n")
	}
	pyFields(b, fields, shapes)
}

func pyFields(b *strings.Builder, fields []field, shapes []shape) {
	for _, f := range fields {
		if f.doc != "" {
			fmt.Fprintf(b, "    #: %s\n", pyText(f.doc))
		}
		fmt.Fprintf(b, "    %s: %s\n", f.wire, pyType(f.typ, shapes))
	}
}

// typescriptTypes is types.d.ts.
func typescriptTypes(shapes []shape) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n\n%s\nimport type { ErrorCode } from \"./consts.js\";\n", header, typesTsDoc)
	for _, a := range aliases {
		fmt.Fprintf(&b, "\n/** %s */\nexport type %s = %s;\n", langDoc(a.doc, false), a.t.alias, tsType(aliased("", a.t), shapes))
	}
	for _, s := range shapes {
		if s.ts == "" {
			continue
		}
		doc := langDoc(s.doc, false)
		if s.tsDoc != "" {
			doc += " " + s.tsDoc
		}
		fmt.Fprintf(&b, "\n/** %s */\nexport interface %s {\n", doc, s.ts)
		for _, f := range s.fields {
			if f.doc != "" {
				fmt.Fprintf(&b, "  /** %s */\n", langDoc(f.doc, false))
			}
			opt := ""
			if f.optional {
				opt = "?"
			}
			fmt.Fprintf(&b, "  %s%s: %s;\n", f.wire, opt, tsType(f.typ, shapes))
		}
		b.WriteString("}\n")
	}
	for _, a := range tsAliases {
		fmt.Fprintf(&b, "\n/** %s */\nexport type %s = %s;\n", a[1], a[0], a[2])
	}
	return []byte(b.String())
}
