// Command polyloop-assemble runs the context assembler on requests given as
// JSON or msgpack, through the native core or the WebAssembly module, and
// writes the responses as JSON, msgpack or a view for people.
//
//	polyloop-assemble [--engine native|wazero|wasmtime] [--in json|msgpack]
//	                  [--out json|msgpack|text] [--batch] [--jobs N]
//	                  [--wasm PATH] [--version] [FILE]
//	polyloop-assemble compare|cache|export ...
//	polyloop-assemble help [COMMAND]
//
// Flags go before or after the operands on every command (args.go).
// With --batch the input is a stream of requests (msgpack: concatenated; JSON:
// one per line) and the output the stream of their responses, in input order,
// computed by --jobs workers in parallel with a bounded window (constant
// memory on an unbounded stream; the output is byte-identical to --jobs 1).
// A request over 1 GiB is read past, not kept, and answered too_large; a
// batch goes on after it (docs/SPEC.md §2.3). Exit status: 0 every request assembled, 1 at least one assembly error,
// 2 usage or I/O error.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/wirejson"
)

// maxJobs bounds --jobs: each worker may hold a module instance (up to 4 GiB
// of linear memory) and the batch window holds 4 results per worker, so a
// larger number buys nothing on any machine and a huge one would exhaust
// memory before the first request.
const maxJobs = 1024

const usage = `usage: polyloop-assemble [flags] [FILE]

Reads a request (JSON or msgpack) from FILE or stdin and writes the response.
Flags go before or after FILE; -- ends them.

flags:
  --engine native|wazero|wasmtime   which build of the core runs (default native)
  --in json|msgpack                 input format (default json)
  --out json|msgpack|text           output format (default json; text is a view for people)
  --batch                           a stream of requests: msgpack concatenated, JSON one per
                                    line (one response per line, a blank line included)
  --jobs N                          with --batch: N requests in parallel (1 to 1024), output
                                    in input order (default: the number of CPUs)
  --wasm PATH                       the module for wazero/wasmtime (default $POLYLOOP_ASSEMBLY_WASM
                                    or wasm/assembly.wasm; build it with 'make wasm')
  --version                         print the version (and the module's sha256 with --engine
                                    wazero or wasmtime) and exit

exit status: 0 ok, 1 at least one assembly error, 2 usage or I/O error

       polyloop-assemble compare [--engine E] [--wasm PATH] [--out json|text] A B

Compares two prompts (docs/SPEC.md §7.9): A and B are files holding a request
or a recorded message list, JSON or msgpack; FILE#N picks line N (from 1) of
a JSONL file. Exit status: 0 identical, 1 different, 2 error.

       polyloop-assemble cache [--out json|text] [--usage FILE] [FILE]
       polyloop-assemble export --provider anthropic|openai-chat|openai-responses|openrouter|bedrock-converse|gemini|gemini-cache [FILE]

A run's cache report (docs/SPEC.md §7.12) and the provider's request body
(§7.13). 'polyloop-assemble help COMMAND' (or 'COMMAND --help') says more of
each.
`

type options struct {
	engine, in, out, wasm string
	batch, version        bool
	jobs                  int
	file                  string
	size                  int64 // bytes of the input file; 0 if unknown
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "compare":
			return runCompare(args[1:], stdout, stderr)
		case "cache":
			return runCache(args[1:], stdin, stdout, stderr)
		case "export":
			return runExport(args[1:], stdin, stdout, stderr)
		case "help":
			return runHelp(args[1:], stdout, stderr)
		}
	}
	o, exit, ok := parseArgs(args, stdout, stderr)
	if !ok {
		return exit
	}
	eng, err := openEngine(o.engine, o.wasm, o.jobs)
	if errors.Is(err, errUnknownEngine) {
		return usageError(stderr, "%v", err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "polyloop-assemble: %v\n", err)
		return 2
	}
	defer eng.Close()
	if o.version {
		fmt.Fprintln(stdout, versionText(eng))
		return 0
	}

	in := stdin
	if o.file != "" && o.file != "-" {
		f, err := os.Open(o.file)
		if err != nil {
			fmt.Fprintf(stderr, "polyloop-assemble: %v\n", err)
			return 2
		}
		defer f.Close()
		in = f
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			o.size = st.Size()
		}
	}
	r := bufio.NewReaderSize(in, 1<<20)
	w := bufio.NewWriterSize(stdout, 1<<20)
	if !o.batch {
		return runOne(r, w, stderr, o, eng)
	}
	return runBatch(r, w, stderr, o, eng)
}

// parseArgs reads the command line into options. ok is false when run is
// to return exit at once: after --help (0) or a usage error (2).
func parseArgs(args []string, stdout, stderr io.Writer) (o options, exit int, ok bool) {
	fs := flag.NewFlagSet("polyloop-assemble", flag.ContinueOnError)
	fs.StringVar(&o.engine, "engine", "native", "")
	fs.StringVar(&o.in, "in", "json", "")
	fs.StringVar(&o.out, "out", "json", "")
	fs.BoolVar(&o.batch, "batch", false, "")
	fs.IntVar(&o.jobs, "jobs", runtime.NumCPU(), "")
	fs.StringVar(&o.wasm, "wasm", "", "")
	fs.BoolVar(&o.version, "version", false, "")
	if exit, ok := parseFlags(fs, args, usage, stdout, stderr); !ok {
		return o, exit, false
	}
	if o.in != "json" && o.in != "msgpack" {
		return o, usageError(stderr, "--in must be json or msgpack, not %q", o.in), false
	}
	if o.out != "json" && o.out != "msgpack" && o.out != "text" {
		return o, usageError(stderr, "--out must be json, msgpack or text, not %q", o.out), false
	}
	if o.jobs < 1 || o.jobs > maxJobs {
		return o, usageError(stderr, "--jobs must be between 1 and %d, not %d (the default is the number of CPUs; more workers than requests in flight only add memory)", maxJobs, o.jobs), false
	}
	if !o.batch {
		o.jobs = 1
	}
	switch fs.NArg() {
	case 0:
	case 1:
		o.file = fs.Arg(0)
	default:
		return o, usageError(stderr, "give at most one input FILE (or none for stdin)"), false
	}
	return o, 0, true
}

func usageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "polyloop-assemble: "+format+"\n\n%s", append(args, usage)...)
	return 2
}

// runOne answers the whole input as one request.
func runOne(r *bufio.Reader, w *bufio.Writer, stderr io.Writer, o options, eng engine) int {
	b, n, err := readRequest(r, o.size, requestLimit)
	if err != nil {
		fmt.Fprintf(stderr, "polyloop-assemble: reading input: %v\n", err)
		return 2
	}
	if n == 0 || o.in == "json" && n <= requestLimit && blank(b) {
		fmt.Fprintln(stderr, "polyloop-assemble: the input is empty; give a request")
		return 2
	}
	it := item{index: 0, line: 0}
	switch {
	case n > requestLimit:
		it.tooLarge = n
	case o.in == "json":
		it.text = b
	default:
		it.msgpack = b
	}
	res := answer(it, o, eng)
	_, werr := w.Write(res.out)
	if werr == nil {
		werr = w.Flush()
	}
	if werr != nil {
		fmt.Fprintf(stderr, "polyloop-assemble: writing output: %v\n", werr)
		return 2
	}
	if res.err != nil {
		fmt.Fprintf(stderr, "polyloop-assemble: %v\n", res.err)
		return 2
	}
	if !res.ok {
		return 1
	}
	return 0
}

// blank reports whether b holds only JSON white space.
func blank(b []byte) bool { return len(bytes.Trim(b, " \t\r\n")) == 0 }

// item is one request of the input: JSON text (line is its 1-based line
// number in a JSON batch) or msgpack bytes.
type item struct {
	index   int
	line    int
	text    []byte
	msgpack []byte
	buf     *[]byte // the pooled buffer holding text or msgpack, if any
	// tooLarge is the size of a request over requestLimit (its bytes were
	// not kept; text and msgpack are nil), else 0.
	tooLarge int64
}

// result is an item's output, ready to write.
type result struct {
	out []byte
	ok  bool
	err error   // the output could not be made (a response that does not decode)
	buf *[]byte // the pooled buffer holding out, if any
}

// bufs recycles a batch's request and output buffers: a long batch then
// allocates (and zeroes) almost nothing per request, which matters because
// the reader and the writer are serial (the workers are not).
var bufs = sync.Pool{New: func() any { return new([]byte) }}

func getBuf() *[]byte { return bufs.Get().(*[]byte) }

// putBuf gives b, held by p, back to the pool (a huge one is dropped).
func putBuf(p *[]byte, b []byte) {
	if p != nil && cap(b) <= 16<<20 {
		*p = b[:0]
		bufs.Put(p)
	}
}

// answer assembles one item and renders its output.
func answer(it item, o options, eng engine) result {
	req, resp := prepare(it)
	ob := getBuf()
	textOut := o.out != "msgpack" && o.out != "json"
	var view *core.View
	switch {
	case resp == nil && textOut:
		// The text view lays the prompt out as the core does: the
		// response with its view, from the engine (docs/SPEC.md §7.8).
		ans := eng.AppendCall(abi.CallAssembleView, (*ob)[:0], req)
		var err error
		if resp, view, err = core.SplitViewAnswer(ans); err != nil {
			resp = core.InternalErrorResponse("the engine's view answer does not split: " + err.Error())
		}
	case resp == nil:
		resp = eng.AppendCall(abi.CallAssemble, (*ob)[:0], req)
	}
	res := render(it, o, resp, view, ob, eng.Name())
	if it.msgpack != nil {
		putBuf(it.buf, it.msgpack)
	} else {
		putBuf(it.buf, it.text)
	}
	return res
}

// prepare returns the msgpack request of it, or the response it gets
// without reaching the engine (over the limit, a blank line, JSON text that
// does not convert).
func prepare(it item) (req, resp []byte) {
	req = it.msgpack
	switch {
	case it.tooLarge > 0:
		resp = tooLargeAnswer(abi.CallAssemble, it.tooLarge)
	case it.line > 0 && blank(it.text):
		resp = core.ErrorResponse(&core.Error{Code: core.CodeMalformedRequest, Offset: -1,
			Message: "line " + strconv.Itoa(it.line) + " is blank; give one JSON request per line (every line gets one response)"})
	case it.text != nil:
		mp, e := wirejson.Request(nil, it.text)
		if e != nil {
			if it.line > 0 {
				e.Message = "line " + strconv.Itoa(it.line) + ": " + e.Message
			}
			resp = core.ErrorResponse(e)
		}
		req = mp
	}
	return req, resp
}

// render writes resp (held in ob) in the output form o.out asks for.
func render(it item, o options, resp []byte, view *core.View, ob *[]byte, engine string) result {
	ok := core.ResponseOK(resp)
	switch o.out {
	case "msgpack":
		return result{out: resp, ok: ok, buf: ob}
	case "json":
		jb := getBuf()
		j, _, err := wirejson.FromMsgpack((*jb)[:0], resp)
		putBuf(ob, resp)
		return result{out: append(j, '\n'), ok: ok, err: err, buf: jb}
	}
	var out bytes.Buffer
	if it.index > 0 {
		out.WriteString("\n")
	}
	bw := bufio.NewWriter(&out)
	err := writeText(bw, resp, view, engine)
	bw.Flush()
	putBuf(ob, resp)
	return result{out: out.Bytes(), ok: ok, err: err}
}

// runBatch answers a stream of requests with o.jobs workers. The reader
// hands each item to the workers and, in input order, a one-slot channel for
// its result to the writer; at most window items are in flight, so memory
// stays bounded on an unbounded stream, and the output is in input order
// whatever the number of workers.
func runBatch(r *bufio.Reader, w *bufio.Writer, stderr io.Writer, o options, eng engine) int {
	stop := make(chan struct{}) // closed when the output fails: stop reading
	order, readErr := startBatch(r, o, eng, stop)
	start := time.Now()
	prog := newProgress(stderr, start)
	n, failed, werr := writeBatch(w, order, stop, prog)
	prog.done()
	rerr := <-readErr
	elapsed := time.Since(start)
	fmt.Fprintf(stderr, "polyloop-assemble: %s requests, %s errors, %.2f s (%s requests/s, %d jobs)\n",
		group(int64(n)), group(int64(failed)), elapsed.Seconds(), group(int64(float64(n)/max(elapsed.Seconds(), 1e-9))), o.jobs)
	switch {
	case werr != nil:
		fmt.Fprintf(stderr, "polyloop-assemble: writing output: %v\n", werr)
		return 2
	case rerr != nil:
		fmt.Fprintf(stderr, "polyloop-assemble: reading input: %v\n", rerr)
		return 2
	case failed > 0:
		return 1
	}
	return 0
}

// startBatch starts the reader and the o.jobs workers of runBatch. It
// returns the result slots in input order (closed after the last item) and
// the reader's error (sent once the reading ends); the reader stops when
// stop is closed.
func startBatch(r *bufio.Reader, o options, eng engine, stop <-chan struct{}) (<-chan chan result, <-chan error) {
	window := 4 * o.jobs
	work := make(chan job, window)
	order := make(chan chan result, window)
	readErr := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(work)
		readErr <- readItems(r, o, func(it item) bool {
			slot := make(chan result, 1)
			select {
			case order <- slot: // blocks while window results wait to be written
			case <-stop:
				return false
			}
			work <- job{it, slot}
			return true
		})
	}()
	for range o.jobs {
		go func() {
			for j := range work {
				j.slot <- answer(j.item, o, eng)
			}
		}()
	}
	return order, readErr
}

// writeBatch writes the results in input order and counts them; at the
// first output it cannot make or write it closes stop and writes no more.
func writeBatch(w *bufio.Writer, order <-chan chan result, stop chan struct{}, prog *progress) (n, failed int, werr error) {
	for slot := range order {
		res := <-slot
		if werr == nil && res.err != nil {
			werr = res.err
			close(stop)
		}
		if werr == nil {
			if _, werr = w.Write(res.out); werr != nil {
				close(stop)
			}
		}
		putBuf(res.buf, res.out)
		n++
		if !res.ok {
			failed++
		}
		prog.update(n, failed)
	}
	if werr == nil {
		werr = w.Flush()
	}
	return n, failed, werr
}

type job struct {
	item item
	slot chan result
}

// readItems reads the batch's items in order and gives each to emit, until
// emit returns false (the output failed). A read error ends it (returned:
// exit 2); only the end of the input ends it cleanly.
// JSON: every line is one item (a blank one too, so that response N answers
// line N); a last line without a newline counts. msgpack: each whole value;
// a stream cut inside a value gives its bytes as a last item (the core says
// where it was cut). A request over requestLimit is read past, not kept, and
// its item says its size (too_large): JSON to its line's end, msgpack by its
// headers; the next request follows.
func readItems(r *bufio.Reader, o options, emit func(item) bool) error {
	for i := 0; ; i++ {
		bp := getBuf()
		it := item{index: i, buf: bp}
		var n int64
		var err error
		if o.in == "msgpack" {
			it.msgpack, n, err = wirejson.NextMsgpackBounded(r, (*bp)[:0], requestLimit, readCeiling)
			switch err {
			case io.EOF:
				return nil
			case nil, wirejson.ErrTruncated: // a cut value is the last
			case wirejson.ErrTooLarge: // read past: the next value follows
				it.msgpack, it.tooLarge, err = nil, n, nil
			case wirejson.ErrEndless: // read no further: the last
				it.msgpack, it.tooLarge = nil, sizeUnknown
			default:
				return err
			}
		} else {
			it.line = i + 1
			it.text, n, err = readLine(r, (*bp)[:0], requestLimit)
			if err != nil && err != io.EOF {
				return err
			}
			if n == 0 && err == io.EOF {
				return nil
			}
			if n > requestLimit {
				it.text, it.tooLarge = nil, n
			}
		}
		if !emit(it) || err != nil {
			return nil
		}
	}
}
