package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core/abi"
)

// The compare subcommand (docs/SPEC.md §7.9): two files (or JSONL lines)
// in, the core's comparison out, as JSON or as text for people.

const compareUsage = `usage: polyloop-assemble compare [--engine E] [--wasm PATH] [--out json|text] A B

Compares two prompts (docs/SPEC.md §7.9): A and B are files holding a request
or a recorded message list, JSON or msgpack; FILE#N picks line N (from 1) of
a JSONL file. Flags go before or after A and B.

flags:
  --engine native|wazero|wasmtime   which build of the core runs (default native)
  --wasm PATH                       the module for wazero/wasmtime
  --out json|text                   the comparison as JSON (default) or as text for people

example: polyloop-assemble compare examples/compare-a.json examples/compare-b.json --out text

exit status: 0 identical, 1 different, 2 error
`

func runCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("polyloop-assemble compare", flag.ContinueOnError)
	engineName := fs.String("engine", "native", "")
	wasmPath := fs.String("wasm", "", "")
	out := fs.String("out", "json", "")
	if exit, ok := parseFlags(fs, args, compareUsage, stdout, stderr); !ok {
		return exit
	}
	if *out != "json" && *out != "text" {
		return usageErrorOf(stderr, fs.Name(), compareUsage, "--out must be json or text, not %q", *out)
	}
	if fs.NArg() != 2 {
		return usageErrorOf(stderr, fs.Name(), compareUsage, "give two inputs, A and B (%d given)", fs.NArg())
	}
	var sides [2][]byte
	for k, arg := range fs.Args() {
		side, err := readSide(arg)
		if err != nil {
			fmt.Fprintf(stderr, "polyloop-assemble compare: %s: %v\n", "AB"[k:k+1], err)
			return 2
		}
		sides[k] = side
	}
	eng, err := openEngine(*engineName, *wasmPath, 1)
	if err != nil {
		fmt.Fprintf(stderr, "polyloop-assemble: %v\n", err)
		return 2
	}
	defer eng.Close()
	return writeComparison(stdout, callArgs(eng, abi.CallCompare, sides[:]...), *out == "text")
}

// readSide reads one input as a side of a compare request: a msgpack map or
// array in a bin, anything else as JSON text in a str (the core judges it as assemble_json does); an
// empty or blank input is an error here, as for the main command.
func readSide(arg string) ([]byte, error) {
	path, line := arg, 0
	if i := strings.LastIndexByte(arg, '#'); i > 0 {
		if _, err := os.Stat(arg); err != nil {
			n, perr := strconv.Atoi(arg[i+1:])
			if perr == nil && n >= 1 {
				path, line = arg[:i], n
			}
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b []byte
	if line > 0 {
		b, err = nthLine(bufio.NewReaderSize(f, 1<<20), line)
	} else {
		var n, size int64
		if st, serr := f.Stat(); serr == nil && st.Mode().IsRegular() {
			size = st.Size() // over the limit: not read, its size quoted
		}
		if b, n, err = readRequest(f, size, requestLimit); err == nil && n > requestLimit {
			err = overLimitError{n}
		}
	}
	if err != nil {
		return nil, err
	}
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 {
		// As the main command says of an empty input (exit 2).
		return nil, errors.New("it is empty; give a request or a recorded message list (JSON or msgpack)")
	}
	return sideOf(b), nil
}

// sideOf is an input as one side of a compare request (or an export's
// request): a msgpack map or array in a bin, judged by the core on its
// own; anything else JSON text in a str (a BOM or stray bytes included),
// judged as the main command judges it.
func sideOf(b []byte) []byte {
	if len(b) > 0 {
		if c := b[0]; c&0xe0 == 0x80 || (c >= 0xdc && c <= 0xdf) {
			return msgp.AppendBytes(nil, b)
		}
	}
	return msgp.AppendStringFromBytes(nil, b)
}

func nthLine(r *bufio.Reader, n int) ([]byte, error) {
	for k := 1; ; k++ {
		line, size, err := readLine(r, nil, requestLimit)
		switch {
		case k == n && size > requestLimit:
			return nil, fmt.Errorf("line %d: %w", n, overLimitError{size})
		case k == n && (err == nil || len(line) > 0):
			return line, nil
		case err != nil:
			return nil, fmt.Errorf("there is no line %d (the file has %d)", n, k-1)
		}
	}
}

// comparison is the JSON answer of the compare export, as the text output
// reads it.
type comparison struct {
	Identical bool `json:"identical"`
	A, B      struct {
		Kind        string `json:"kind"`
		Messages    int    `json:"messages"`
		PromptChars int64  `json:"prompt_chars"`
	}
	First *struct {
		Message, Char int
		Kind          string
		Segment       *string
		Step          *int
		RoleA         *string `json:"role_a"`
		RoleB         *string `json:"role_b"`
		Before        string  `json:"excerpt_before"`
		ExcerptA      *string `json:"excerpt_a"`
		ExcerptB      *string `json:"excerpt_b"`
	} `json:"first_difference"`
	Digests   map[string]*bool `json:"prefix_digests"`
	Cacheable int64            `json:"cacheable_prefix_chars"`
	Error     *struct{ Code, Message, Path string }
}

// writeComparison writes the answer (as it is, or as text) and returns the
// exit status: 0 identical, 1 different, 2 an error.
func writeComparison(w io.Writer, ans []byte, text bool) int {
	var c comparison
	if err := json.Unmarshal(ans, &c); err != nil {
		fmt.Fprintf(w, "%s\n", ans)
		return 2
	}
	if !text {
		fmt.Fprintf(w, "%s\n", ans)
	} else {
		writeComparisonText(w, &c)
	}
	switch {
	case c.Error != nil:
		return 2
	case c.Identical:
		return 0
	}
	return 1
}

func writeComparisonText(w io.Writer, c *comparison) {
	if e := c.Error; e != nil {
		fmt.Fprintf(w, "error: %s at %q: %s\n", e.Code, e.Path, e.Message)
		return
	}
	verdict := "differ"
	if c.Identical {
		verdict = "are identical"
	}
	fmt.Fprintf(w, "A (%s, %d message%s, %s chars) and B (%s, %d message%s, %s chars) %s\n",
		c.A.Kind, c.A.Messages, plural(c.A.Messages), group(c.A.PromptChars),
		c.B.Kind, c.B.Messages, plural(c.B.Messages), group(c.B.PromptChars), verdict)
	if d := c.First; d != nil {
		where := ""
		if d.Segment != nil {
			where = ", " + *d.Segment
			if d.Step != nil {
				where += " step " + strconv.Itoa(*d.Step)
			}
		}
		fmt.Fprintf(w, "first difference: message %d, character %d (%s%s)\n", d.Message, d.Char, d.Kind, where)
		fmt.Fprintf(w, "  before: %s\n  A:      %s\n  B:      %s\n", quoteVisible(&d.Before), quoteVisible(d.ExcerptA), quoteVisible(d.ExcerptB))
	}
	var parts []string
	for _, k := range []string{"run", "injections", "goal"} {
		switch m := c.Digests[k]; {
		case m == nil:
			parts = append(parts, k+" unknown")
		case *m:
			parts = append(parts, k+" matches")
		default:
			parts = append(parts, k+" differs")
		}
	}
	fmt.Fprintf(w, "prefix digests: %s\n", strings.Join(parts, ", "))
	fmt.Fprintf(w, "cacheable prefix B keeps: %s of %s chars\n", group(c.Cacheable), group(c.B.PromptChars))
}

// quoteVisible quotes an excerpt with its invisible characters marked
// (visible, as the text view marks them); "(none)" for a missing one.
func quoteVisible(s *string) string {
	if s == nil {
		return "(none)"
	}
	return "\"" + strings.ReplaceAll(visible(*s), "\n", "\\n") + "\""
}
