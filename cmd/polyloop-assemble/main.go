// Command polyloop-assemble runs the context assembler on requests given as
// JSON or msgpack, through the native core or the WebAssembly module, and
// writes the responses as JSON, msgpack or a view for people.
//
//	polyloop-assemble [--engine native|wazero|wasmtime] [--in json|msgpack]
//	                  [--out json|msgpack|text] [--batch] [--wasm PATH] [FILE]
//
// With --batch the input is a stream of requests (msgpack: concatenated; JSON:
// one per line) and the output the stream of their responses, in order.
// Exit status: 0 every request assembled, 1 at least one assembly error,
// 2 usage or I/O error.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/wirejson"
)

const usage = `usage: polyloop-assemble [flags] [FILE]

Reads a request (JSON or msgpack) from FILE or stdin and writes the response.

flags:
  --engine native|wazero|wasmtime   which build of the core runs (default native)
  --in json|msgpack                 input format (default json)
  --out json|msgpack|text           output format (default json; text is a view for people)
  --batch                           a stream of requests: msgpack concatenated, JSON one per line
  --wasm PATH                       the module for wazero/wasmtime (default $POLYLOOP_ASSEMBLY_WASM
                                    or wasm/assembly.wasm; build it with 'make wasm')

exit status: 0 ok, 1 at least one assembly error, 2 usage or I/O error
`

type options struct {
	engine, in, out, wasm string
	batch                 bool
	file                  string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("polyloop-assemble", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o options
	fs.StringVar(&o.engine, "engine", "native", "")
	fs.StringVar(&o.in, "in", "json", "")
	fs.StringVar(&o.out, "out", "json", "")
	fs.BoolVar(&o.batch, "batch", false, "")
	fs.StringVar(&o.wasm, "wasm", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "polyloop-assemble: %v\n\n%s", err, usage)
		return 2
	}
	if o.in != "json" && o.in != "msgpack" {
		return usageError(stderr, "--in must be json or msgpack, not %q", o.in)
	}
	if o.out != "json" && o.out != "msgpack" && o.out != "text" {
		return usageError(stderr, "--out must be json, msgpack or text, not %q", o.out)
	}
	switch fs.NArg() {
	case 0:
	case 1:
		o.file = fs.Arg(0)
	default:
		return usageError(stderr, "give at most one input FILE (or none for stdin)")
	}
	eng, err := openEngine(o.engine, o.wasm)
	if err != nil {
		fmt.Fprintf(stderr, "polyloop-assemble: %v\n", err)
		return 2
	}
	defer eng.Close()

	in := stdin
	if o.file != "" && o.file != "-" {
		f, err := os.Open(o.file)
		if err != nil {
			fmt.Fprintf(stderr, "polyloop-assemble: %v\n", err)
			return 2
		}
		defer f.Close()
		in = f
	}
	r := bufio.NewReaderSize(in, 1<<20)
	w := bufio.NewWriterSize(stdout, 1<<20)
	defer w.Flush()

	failed := false
	for n := 0; ; n++ {
		req, more, err := nextRequest(r, o)
		if err != nil {
			fmt.Fprintf(stderr, "polyloop-assemble: reading input: %v\n", err)
			return 2
		}
		if req == nil && !more {
			if n == 0 && !o.batch {
				fmt.Fprintln(stderr, "polyloop-assemble: the input is empty; give a request")
				return 2
			}
			break
		}
		resp := req.response
		if resp == nil {
			resp = eng.AssembleBytes(req.msgpack)
		}
		ok, err := writeResponse(w, o, n, req.msgpack, resp, eng.Name())
		if err != nil {
			fmt.Fprintf(stderr, "polyloop-assemble: writing output: %v\n", err)
			return 2
		}
		failed = failed || !ok
		if !o.batch || !more {
			break
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "polyloop-assemble: writing output: %v\n", err)
		return 2
	}
	if failed {
		return 1
	}
	return 0
}

func usageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "polyloop-assemble: "+format+"\n\n%s", append(args, usage)...)
	return 2
}

// request is one input request: its msgpack bytes, or (for a JSON syntax
// error) the response already decided.
type request struct {
	msgpack  []byte
	response []byte
}

// nextRequest reads the next request. more reports whether the stream may
// hold another one.
func nextRequest(r *bufio.Reader, o options) (*request, bool, error) {
	if o.in == "msgpack" {
		if !o.batch {
			b, err := io.ReadAll(r)
			if err != nil {
				return nil, false, err
			}
			if len(b) == 0 {
				return nil, false, nil
			}
			return &request{msgpack: b}, false, nil
		}
		b, err := wirejson.NextMsgpack(r, nil)
		switch {
		case err == io.EOF:
			return nil, false, nil
		case err == wirejson.ErrTruncated:
			return &request{msgpack: b}, false, nil // the core says where it was cut
		case err != nil:
			return nil, false, err
		}
		return &request{msgpack: b}, true, nil
	}
	var text []byte
	if o.batch {
		for {
			line, err := r.ReadBytes('\n')
			if len(line) == 0 && err == io.EOF {
				return nil, false, nil
			}
			if err != nil && err != io.EOF {
				return nil, false, err
			}
			if strings.TrimSpace(string(line)) == "" { // blank lines separate nothing
				if err == io.EOF {
					return nil, false, nil
				}
				continue
			}
			text = line
			break
		}
	} else {
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, false, err
		}
		if len(strings.TrimSpace(string(b))) == 0 {
			return nil, false, nil
		}
		text = b
	}
	mp, e := wirejson.Request(nil, text)
	if e != nil {
		return &request{response: core.ErrorResponse(e)}, o.batch, nil
	}
	return &request{msgpack: mp}, o.batch, nil
}

func writeResponse(w *bufio.Writer, o options, n int, req, resp []byte, engine string) (bool, error) {
	ok := len(resp) > 7 && resp[7] == 0xc3 // {v: 1, ok: true, ...}: the canonical layout
	switch o.out {
	case "msgpack":
		_, err := w.Write(resp)
		return ok, err
	case "json":
		j, _, err := wirejson.FromMsgpack(nil, resp)
		if err != nil {
			return false, err
		}
		j = append(j, '\n')
		_, err = w.Write(j)
		return ok, err
	default:
		if n > 0 {
			w.WriteString("\n")
		}
		return ok, writeText(w, req, resp, engine)
	}
}
