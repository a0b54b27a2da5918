package core

// utf8Count validates b as UTF-8 exactly as utf8.Valid does (surrogates,
// overlong forms and code points above U+10FFFF rejected) and, in the same
// pass, counts its code points. n is the count when ok.
//
// This is the module's form, written in WebAssembly text (utf8_wasm.s) as
// one wasm loop that branches with br_if: Go's WebAssembly code routes every
// jump between its blocks through a br_table at the top of the function
// (the loop's values stored and reloaded around each), and the Go form
// (utf8_other.go, the same steps) took two to four of those per character
// or eight ASCII bytes.
//
//go:noescape
func utf8Count(b []byte) (n int, ok bool)
