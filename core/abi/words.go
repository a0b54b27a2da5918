package abi

// Words are what the core's messages call the kinds of values, in the
// vocabulary of the people who read them (docs/SPEC.md §6): a Python user
// writes a dict, a list and None, not a map, an array and nil. A host picks
// its vocabulary once per module instance (the set_words call); the
// default is the wire's, which JSON and JavaScript users read too.
type Words struct {
	Name                              string // its name: the argument of set_words
	Map, Array, Str, Int, Float, Bool string // "a map", …
	Nil, Bin, Ext                     string
	Text                              string // a str, as text: "a str (UTF-8 text)"
	Request                           string // what a request is: "a msgpack map"
	NoBudget                          string // the value of no budget: "nil"
	Key                               string // the rule of a map's keys: "map keys must be str"
	BigInt                            string // an int a host could not write in 64 bits
	InThisMap                         string // "this map"
	JSONValue                         string // any JSON value: "a map, array, str, number, bool or nil"
}

// Vocabularies are the hosts' words, the wire's first (the default).
var Vocabularies = []Words{
	{
		Name: "wire", Map: "a map", Array: "an array", Str: "a str", Int: "an int", Float: "a float", Bool: "a bool",
		Nil: "nil (None in Python; null in JSON and JavaScript)", Bin: "bin (bytes)", Ext: "an ext value",
		Text: "a str (UTF-8 text)", Request: "a msgpack map", NoBudget: "nil", Key: "map keys must be str",
		BigInt: "an int beyond 64 bits", InThisMap: "this map", JSONValue: "a map, array, str, number, bool or nil",
	},
	{
		Name: "python", Map: "a dict", Array: "a list", Str: "a str", Int: "an int", Float: "a float", Bool: "a bool",
		Nil: "None", Bin: "bytes", Ext: "a value of another type (a set, a datetime, an object…)",
		Text: "a str", Request: "a dict", NoBudget: "None", Key: "dict keys must be str",
		BigInt: "an int beyond 64 bits", InThisMap: "this dict", JSONValue: "a dict, list, str, number, bool or None",
	},
	{
		Name: "js", Map: "an object", Array: "an array", Str: "a string", Int: "an integer", Float: "a number with a fraction",
		Bool: "a boolean", Nil: "null", Bin: "bytes (a Uint8Array)", Ext: "a value of another type (a function, a symbol, a class instance…)",
		Text: "a string", Request: "an object", NoBudget: "null", Key: "object keys must be strings",
		BigInt: "an integer beyond 64 bits", InThisMap: "this object", JSONValue: "an object, array, string, number, boolean or null",
	},
}

// ExtBigInt is the msgpack ext type a host writes in place of an int it
// cannot write in 64 bits (Python's int, JavaScript's bigint), its data
// the int's decimal text: the core names it Words.BigInt at its path.
const ExtBigInt = 3
