package main

// The wire's request and response types, written into the bindings as
// Python TypedDicts (_types.py) and TypeScript interfaces (types.d.ts) from
// the Go types of package core: reflect gives the fields and their types,
// the Go source (go/ast) their docs. What Go cannot say is in the table
// below: the binding's name of a type, the wire name where it is not the
// field's name in snake_case, the literal values of a string field, which
// keys may be absent, the fields a host never sees (Go's bookkeeping), the
// fields Go keeps outside the struct (v, ok), and a doc where Go's speaks of
// Go (-1 for none, "" for none).

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"unicode"

	"github.com/polyloop/assembly/core"
)

const (
	typesPyPath = "bindings/python/src/polyloop_assembly/_types.py"
	typesTsPath = "bindings/js/src/types.d.ts"
)

// texpr is the type of a field, written in either language by pyType and
// tsType.
type texpr struct {
	kind  string   // "str", "int", "bool", "list", "dict", "named", "null", "lit"
	elem  *texpr   // list, dict (its values), null
	name  string   // named: the type's name in the table (its py or ts name is written)
	lits  []string // lit: the values
	py    string   // Python's spelling, where not the kind's
	ts    string   // TypeScript's spelling, where not the kind's
	alias string   // lit: written as this alias's name (Role)
}

func lit(values ...string) *texpr { return &texpr{kind: "lit", lits: values} }
func named(name string) *texpr    { return &texpr{kind: "named", name: name} }
func null(t *texpr) *texpr        { return &texpr{kind: "null", elem: t} }
func prim(kind string) *texpr     { return &texpr{kind: kind} }

// spelled is t spelled py in Python and ts in TypeScript ("" where t's
// own spelling).
func spelled(t *texpr, py, ts string) *texpr {
	c := *t
	c.py, c.ts = py, ts
	return &c
}

// field is one key of a generated type.
type field struct {
	wire     string
	typ      *texpr
	optional bool // the key may be absent (Python total=False, TypeScript ?)
	doc      string
}

// shape is one generated type.
type shape struct {
	py, ts string // its names; "" where a binding does not have it
	doc    string
	tsDoc  string // TypeScript's only
	fields []field
}

// fieldOpt says what Go does not of one field, by its Go name.
type fieldOpt struct {
	wire     string // the wire name; default: the Go name in snake_case
	typ      *texpr // the type; default: from the Go type
	ts       string // TypeScript's spelling of the Go type
	optional bool
	doc      string // the doc; default: the Go field's, its Go names made wire names
	skip     bool   // never on the wire (Go's bookkeeping)
}

// typeSpec is one row of the table: a Go struct (nil for a type Go has no
// struct for) and what the bindings add.
type typeSpec struct {
	py, ts string
	goType any
	doc    string
	tsDoc  string  // said in TypeScript only, after doc
	extra  []field // keys Go keeps outside the struct, before its fields
	opts   map[string]fieldOpt
	each   *texpr // every field of goType gets this type (a match per digest)
}

// The literal types; their values are core's constants.
var (
	roleType        = &texpr{kind: "lit", lits: []string{core.RoleSystem, core.RoleUser, core.RoleAssistant}, alias: "Role"}
	versionType     = spelled(prim("int"), "", "number | bigint")
	wireVersion     = spelled(prim("int"), "", fmt.Sprint(core.WireVersion))
	segmentType     = lit("run", "injections", "goal", "history")
	sideKindType    = lit("request", "messages")
	differenceKinds = lit(core.DiffRole, core.DiffText, core.DiffBlocks, core.DiffLength)
)

// the excerpts' doc, with their bounds in code points.
var excerptDoc = fmt.Sprintf("side %%s's text from the difference, at most %d code points (\"…\" marks a cut); null when that side's prompt has no message at `message`", core.ExcerptAfter)

var typeTable = []typeSpec{
	{py: "Block", ts: "TextBlock", goType: core.Block{},
		doc:  "A content block; `text` is the only block type of wire version 1.",
		opts: map[string]fieldOpt{"Type": {typ: lit(core.BlockTypeText)}}},
	{py: "Message", ts: "Message", goType: core.Message{},
		doc:  "A chat message: a role and its content blocks.",
		opts: map[string]fieldOpt{"Role": {typ: roleType}}},
	{py: "Injection", ts: "Injection", goType: core.Injection{},
		doc: "One entry of an injection channel, pasted as one user message."},
	{py: "Step", ts: "Step", goType: core.Step{},
		doc: "One completed step of the loop: the text handed back for the history and the observation."},
	{py: "AssembleRequest", ts: "AssembleRequest", goType: core.Request{},
		doc: "An assembly request (" + spec("§2") + "). Only `observation_template` is required. " +
			"Any value is accepted at run time: the core alone decides what is valid.",
		tsDoc: "Plain objects, arrays and strings; `injections` may also be a `Map`. Any other JavaScript value is encoded " +
			"faithfully (or as a value the core rejects) so that a mistake gets the core's own error code and path; " +
			"see the README's \"JavaScript values\".",
		extra: []field{{wire: "v", typ: versionType, optional: true, doc: fmt.Sprintf("The wire version; %d (the default).", core.WireVersion)}},
		opts: map[string]fieldOpt{
			"RunMessages":    {optional: true},
			"Injections":     {optional: true, doc: "Channel name to entries; channels are pasted in code-point order of their names.", ts: "Record<string, Injection[]> | Map<string, Injection[]>"},
			"GoalMessages":   {optional: true},
			"Steps":          {optional: true},
			"MaxPromptChars": {optional: true, ts: "number | bigint | null"},
		}},
	{py: "Injected", ts: "Injected", goType: core.Injected{},
		doc:  "One message pasted by the injection slot.",
		opts: map[string]fieldOpt{"MessageIndex": {doc: "The index of the pasted message in `messages`."}}},
	{py: "PrefixDigests", ts: "PrefixDigests", goType: core.PrefixDigests{},
		doc: "Lowercase hex SHA-256 of the canonical encoding of `messages` up to the end of each segment; " +
			"equal digests mean an identical cacheable prefix."},
	{py: "AssembleResponse", ts: "AssembleResponse", goType: core.Response{},
		doc: "A successful assembly (" + spec("§6") + ").",
		extra: []field{
			{wire: "v", typ: wireVersion, doc: "The wire version."},
			{wire: "ok", typ: spelled(prim("bool"), "", "true"), doc: "Always true."},
		}},
	{py: "ErrorDetail", ts: "ErrorDetail", goType: core.Error{},
		doc: "The `error` member of an error response.",
		opts: map[string]fieldOpt{
			"Code":   {typ: spelled(prim("str"), "ErrorCode", "ErrorCode"), doc: "The error code (" + spec("§6") + ")."},
			"Path":   {doc: "The offending value, like `steps[3].observation`; empty for the whole request."},
			"Offset": {optional: true, doc: "The code-point offset of the problem in the template; only in `invalid_template` errors."},
			"Detail": {skip: true},
		}},
	{py: "ErrorResponse", ts: "ErrorResponse",
		doc: "An error response, as the wire function (assemble_bytes, assembleBytes) returns it, decoded.",
		extra: []field{
			{wire: "v", typ: wireVersion, doc: "The wire version."},
			{wire: "ok", typ: spelled(prim("bool"), "", "false"), doc: "Always false."},
			{wire: "error", typ: named("ErrorDetail")},
		}},
	{py: "CompareSide", ts: "CompareSide", goType: core.CompareSide{},
		doc:  "One side of a comparison: a request (assembled) or a recorded message list.",
		opts: map[string]fieldOpt{"Kind": {typ: sideKindType, doc: "`\"request\"` or `\"messages\"`."}, "Messages": {doc: "The number of the side's messages."}}},
	{py: "Difference", ts: "Difference", goType: core.Difference{},
		doc: "Where two prompts first differ (" + spec("§7.9") + ").",
		opts: map[string]fieldOpt{
			"Kind":    {typ: differenceKinds},
			"Segment": {typ: null(segmentType), doc: "The segment of `message` in the layout of side b (of side a when b is a recorded list); null when neither side is a request."},
			"Step":    {typ: null(prim("int")), doc: "The step of a history message; null otherwise."},
			"RoleA":   {typ: null(prim("str")), doc: "The role of side a's message; null when its prompt has no message at `message`."},
			"RoleB":   {typ: null(prim("str")), doc: "The role of side b's message; null when its prompt has no message at `message`."},
			"HasA":    {skip: true},
			"HasB":    {skip: true},
			"Before":  {wire: "excerpt_before", doc: fmt.Sprintf("The common text just before the difference, at most %d code points (\"…\" marks a cut).", core.ExcerptBefore)},
			"A":       {wire: "excerpt_a", typ: null(prim("str")), doc: fmt.Sprintf(excerptDoc, "a")},
			"B":       {wire: "excerpt_b", typ: null(prim("str")), doc: fmt.Sprintf(excerptDoc, "b")},
		}},
	{py: "PrefixDigestsMatch", ts: "PrefixDigestsMatch", goType: core.PrefixDigests{}, each: null(prim("bool")),
		doc: "Whether each prefix digest still matches; null where it cannot be told (neither side is a request)."},
	{py: "Comparison", ts: "Comparison", goType: core.Comparison{},
		doc: "The answer of compare (" + spec("§7.9") + ").",
		opts: map[string]fieldOpt{
			"First":   {wire: "first_difference"},
			"Digests": {wire: "prefix_digests", typ: named("PrefixDigestsMatch")},
		}},
	{ts: "RecordedMessage",
		doc: "A recorded message: what a loop sent, one side of compare.",
		extra: []field{
			{wire: "role", typ: prim("str")},
			{wire: "content", typ: spelled(prim("str"), "", "string | TextBlock[]"), doc: "The text, or its blocks."},
		}},
}

// tsAliases are TypeScript's types that are no object (one side of
// compare: its JSON text or msgpack bytes too).
var tsAliases = [][3]string{
	{"CompareInput", "One side of compare: a request, a recorded message list, either as JSON text or msgpack bytes.", "AssembleRequest | RecordedMessage[] | string | Uint8Array"},
}

// goNames are core's exported names the field docs may use, written as the
// bindings call them.
var goNames = map[string][2]string{ // Python, TypeScript
	"ValidateTemplate": {"validate_template", "validateTemplate"},
}

// shapes builds the generated types from the table and the Go source in
// dir (core's directory).
func buildShapes(dir string) ([]shape, error) {
	docs, err := fieldDocs(dir)
	if err != nil {
		return nil, err
	}
	var out []shape
	for _, ts := range typeTable {
		s := shape{py: ts.py, ts: ts.ts, doc: ts.doc, tsDoc: ts.tsDoc, fields: append([]field(nil), ts.extra...)}
		if ts.goType != nil {
			fs, err := goFields(ts, docs)
			if err != nil {
				return nil, err
			}
			s.fields = append(s.fields, fs...)
		}
		out = append(out, s)
	}
	return out, nil
}

// goFields are the fields of ts's Go struct, as the wire has them.
func goFields(ts typeSpec, docs map[string]string) ([]field, error) {
	t := reflect.TypeOf(ts.goType)
	names := map[string]string{} // Go field name -> wire name, for the docs
	for i := range t.NumField() {
		f := t.Field(i)
		names[f.Name] = snake(f.Name)
		if o, ok := ts.opts[f.Name]; ok && o.wire != "" {
			names[f.Name] = o.wire
		}
	}
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		o := ts.opts[f.Name]
		if o.skip {
			continue
		}
		fl := field{wire: names[f.Name], typ: o.typ, optional: o.optional, doc: o.doc}
		if ts.each != nil {
			fl.typ = ts.each
		}
		if fl.typ == nil {
			typ, err := goType(f.Type)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
			}
			fl.typ = typ
			if o.ts != "" {
				fl.typ = spelled(typ, "", o.ts)
			}
		}
		if fl.doc == "" && ts.each == nil {
			fl.doc = wireDoc(docs[t.Name()+"."+f.Name], f.Name, names)
		}
		fl.doc = sentence(fl.doc)
		out = append(out, fl)
	}
	return out, nil
}

// goType is the wire type of a Go type: a struct is the table's type of it.
func goType(t reflect.Type) (*texpr, error) {
	switch t.Kind() {
	case reflect.String:
		return prim("str"), nil
	case reflect.Int, reflect.Int64:
		return prim("int"), nil
	case reflect.Bool:
		return prim("bool"), nil
	case reflect.Slice, reflect.Pointer, reflect.Map:
		if t.Kind() == reflect.Map && t.Key().Kind() != reflect.String {
			break
		}
		e, err := goType(t.Elem())
		kind := map[reflect.Kind]string{reflect.Slice: "list", reflect.Pointer: "null", reflect.Map: "dict"}[t.Kind()]
		return &texpr{kind: kind, elem: e}, err
	case reflect.Struct:
		for _, ts := range typeTable {
			if ts.goType != nil && ts.each == nil && reflect.TypeOf(ts.goType) == t {
				return named(ts.py), nil
			}
		}
		return nil, fmt.Errorf("the struct %s has no row in the type table", t)
	}
	return nil, fmt.Errorf("no wire type for the Go type %s: give the field a type in the type table", t)
}

// snake is a Go name in snake_case: EntryID is entry_id.
func snake(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// fieldDocs reads the docs of the struct fields of package core's Go
// files in dir, by "Type.Field": the comment above a field, else the one
// after it.
func fieldDocs(dir string) (map[string]string, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	docs := map[string]string{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := spec.Type.(*ast.StructType)
			if !ok {
				return false
			}
			for _, fl := range st.Fields.List {
				text := fl.Doc.Text()
				if text == "" {
					text = fl.Comment.Text()
				}
				for _, name := range fl.Names {
					docs[spec.Name.Name+"."+name.Name] = strings.Join(strings.Fields(text), " ")
				}
			}
			return false
		})
	}
	return docs, nil
}

// goConsts are core's constants a field doc may name, by their values.
var goConsts = map[string]string{
	"BlockTypeText": core.BlockTypeText, "RoleSystem": core.RoleSystem, "RoleUser": core.RoleUser,
	"RoleAssistant": core.RoleAssistant, "DiffRole": core.DiffRole, "DiffText": core.DiffText,
	"DiffBlocks": core.DiffBlocks, "DiffLength": core.DiffLength,
}

var (
	leadName = regexp.MustCompile(`^([A-Z][A-Za-z]*) (is|are|says,) `)
	goWord   = regexp.MustCompile(`\b[A-Z][a-z]+[A-Z][A-Za-z]*\b|\b[A-Z]\b|\bnil\b|\b[A-Z][a-z]+\b`)
)

// wireDoc is a Go field's doc in the wire's words: "Name is x" is "X",
// the struct's field names are their wire names, core's constants their
// values; nil is null (each binding writes it its own way).
func wireDoc(doc, name string, names map[string]string) string {
	if doc == "" {
		return ""
	}
	if m := leadName.FindStringSubmatch(doc); m != nil && m[1] == name {
		doc = doc[len(m[0]):]
	} else if rest, ok := strings.CutPrefix(doc, name+" "); ok {
		doc = rest // "Name counts x": "Counts x"
	}
	doc = goWord.ReplaceAllStringFunc(doc, func(w string) string {
		if wire, ok := names[w]; ok {
			return "`" + wire + "`"
		}
		if v, ok := goConsts[w]; ok {
			return "`" + quote(v) + "`"
		}
		if w == "nil" {
			return "null"
		}
		return w
	})
	return doc
}

// sentence is doc with a capital and a full stop.
func sentence(doc string) string {
	if doc == "" {
		return ""
	}
	doc = strings.ToUpper(doc[:1]) + doc[1:]
	if !strings.HasSuffix(doc, ".") {
		doc += "."
	}
	return doc
}

// repoRoot is the directory of go.mod, from the working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working directory: run from the repository")
		}
		dir = up
	}
}

// addTypes adds _types.py and types.d.ts, from core's Go types, to out.
func addTypes(out map[string][]byte) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	shapes, err := buildShapes(filepath.Join(root, "core"))
	if err != nil {
		return err
	}
	out[typesPyPath], out[typesTsPath] = pythonTypes(shapes), typescriptTypes(shapes)
	return nil
}
